package clientconfig_test

import (
	"slices"
	"testing"

	"github.com/verifymcp/verifymcp/clientconfig"
	"github.com/verifymcp/verifymcp/rubric"
)

// TestCodesCatalogued: the reader emits exactly the codes the config
// catalog holds, each with its remediation, so that no report carries a
// claim nobody catalogued and no catalogued claim is never made.
func TestCodesCatalogued(t *testing.T) {
	emitted := []string{
		clientconfig.CodeCredentialLiteral, clientconfig.CodeCredentialReference, clientconfig.CodeLaunchUnpinned,
		clientconfig.CodeLaunchPinned, clientconfig.CodeReachLocalProcess, clientconfig.CodeReachLoopback,
		clientconfig.CodeReachRemote, clientconfig.CodeFilesystemBroad, clientconfig.CodeTransportPlaintext,
	}
	cat := rubric.ConfigCatalog()
	var catalogued []string
	for _, c := range cat.Codes {
		catalogued = append(catalogued, c.Code)
	}
	slices.Sort(emitted)
	slices.Sort(catalogued)
	if !slices.Equal(emitted, catalogued) {
		t.Errorf("emitted %q, catalogued %q", emitted, catalogued)
	}
}
