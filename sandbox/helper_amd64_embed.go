//go:build embedhelpers && !(linux && amd64)

package sandbox

import _ "embed"

// helperLinuxAMD64 is the gzip-compressed linux/amd64 build of this program
// that `make dist` puts in embedded/ before it builds the release binaries
// (a linux/amd64 binary is its own helper and does not carry it).
//
//go:embed embedded/verifymcp-linux-amd64.gz
var helperLinuxAMD64 []byte

// The build constraint decides whether this binary carries the build; init
// records it, as a constraint cannot add an entry to a map literal.
func init() { embeddedHelpers["amd64"] = helperLinuxAMD64 }
