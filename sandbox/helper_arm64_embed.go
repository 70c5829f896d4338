//go:build embedhelpers && !(linux && arm64)

package sandbox

import _ "embed"

// helperLinuxARM64 is the gzip-compressed linux/arm64 build of this program
// that `make dist` puts in embedded/ before it builds the release binaries
// (a linux/arm64 binary is its own helper and does not carry it).
//
//go:embed embedded/verifymcp-linux-arm64.gz
var helperLinuxARM64 []byte

// The build constraint decides whether this binary carries the build; init
// records it, as a constraint cannot add an entry to a map literal.
func init() { embeddedHelpers["arm64"] = helperLinuxARM64 }
