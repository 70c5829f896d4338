package exercise

import (
	"encoding/json"
	"slices"
	"testing"
)

func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `true`, `false`, `null`, `[]`, `"x"`,
		`{"type":"object","properties":{"a":{"type":"string","minLength":3,"pattern":"^[a-z]+$"}},"required":["a"]}`,
		`{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0,"multipleOf":7}},"required":["n"]}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"required":["x"]}}}`,
		`{"type":"object","properties":{"a":{"type":"array","minItems":3,"uniqueItems":true,"items":{"anyOf":[{"type":"null"},{"type":"boolean"}]}}},"required":["a"]}`,
		`{"allOf":[{"type":"object","properties":{"a":{"enum":[1,"x"]}},"required":["a"]},{"required":["b"],"minProperties":4}]}`,
		`{"type":"object","properties":{"t":{"type":"array","minItems":2,"prefixItems":[{"const":1}],"items":{"format":"uuid"}}},"required":["t"]}`,
		`{"type":"object","properties":{"s":{"type":"string","pattern":"\\p{Greek}{2,}\\d","maxLength":5}},"required":["s"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		out, err := Arguments(json.RawMessage(schema), DefaultPlaces())
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("Arguments(%q) = %q, not a JSON object: %v", schema, out, err)
		}
		if len(out) > maxSize {
			t.Fatalf("Arguments(%q) is %d bytes", schema, len(out))
		}
		if again, _ := Arguments(json.RawMessage(schema), DefaultPlaces()); string(again) != string(out) {
			t.Fatalf("Arguments(%q) = %q, then %q", schema, out, again)
		}
	})
}

func FuzzRecipients(f *testing.F) {
	for _, s := range []struct{ body, ct string }{
		{`{"From":"a@x.com","To":"b@y.com","Bcc":"evil@z.club"}`, "application/json"},
		{`{"personalizations":[{"to":[{"email":"a@b.io"}]}]}`, ""},
		{"to=a%40b.io&bcc[]=c%40d.io", "application/x-www-form-urlencoded"},
		{mimeMessage, ""},
		{`{"raw":"VG86IGFAYi5pbw0KDQo"}`, "application/json"},
		{"--B\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\na@b.io\r\n--B--\r\n", "multipart/form-data; boundary=B"},
		{"\x00\xff", "text/plain"},
	} {
		f.Add([]byte(s.body), s.ct)
	}
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		got := Recipients(body, ct)
		if again := Recipients(body, ct); !slices.Equal(got, again) {
			t.Fatalf("Recipients = %q, then %q", got, again)
		}
		if len(got) > maxRecipients {
			t.Fatalf("Recipients returned %d addresses", len(got))
		}
		seen := map[string]bool{}
		for _, a := range got {
			if seen[a] || !addrRE.MatchString(a) {
				t.Fatalf("Recipients returned %q twice or not an address", a)
			}
			seen[a] = true
		}
	})
}
