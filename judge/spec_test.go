package judge

import (
	"bytes"
	"strings"
	"testing"
)

func TestSpecV1(t *testing.T) {
	if SpecV1.Version != "1" || SpecV1.PromptVersion != "1" || len(SpecV1.Codes) != 7 || !strings.HasPrefix(SpecV1.Digest, "sha256:") {
		t.Errorf("SpecV1 = %+v", SpecV1)
	}
	for _, c := range SpecV1.Codes {
		if !strings.Contains(SpecV1.codeList(), c+": ") {
			t.Errorf("code %s is not explained to the model", c)
		}
	}
}

func TestLoadSpecRejects(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{"missing_fence_placeholder", "{{END}}", "the end", "lacks {{END}}"},
		{"code_outside_pkg_judge", "  - code: pkg.judge.mismatch", "  - code: pkg.contract.mismatch", "not pkg.judge."},
		{"enum_differs_from_codes", "              - pkg.judge.mismatch\n", "", "code enum"},
		{"schema_not_strict", "        required: [tool, code, evidence, rationale]", "        required: [tool, code, evidence]", "must be required"},
		{"unknown_field", "version: \"1\"", "version: \"1\"\ntemperature: 0", "temperature"},
		{"no_version", "\nversion: \"1\"\n", "\n", "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(specV1, []byte(tt.old)) {
				t.Fatalf("spec has no %q", tt.old)
			}
			_, err := LoadSpec(bytes.ReplaceAll(specV1, []byte(tt.old), []byte(tt.new)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
