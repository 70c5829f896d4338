// Package layers is the import graph the module holds to: every package
// of the module in one tier, and a package imports only packages of lower
// tiers. Its test reads the real imports (go list) and fails on an import
// that crosses a tier upward or sideways, on a package placed in no tier,
// and when docs/layout.md does not draw the graph it read (go test
// ./internal/layers -update redraws it).
package layers

// Tiers are the module's packages, lowest first, by import path below the
// module. A path ending in "/..." stands for every package under it that
// no longer entry names.
var Tiers = []Tier{
	{"leaves", "standard library and third parties only", []string{
		"pkgspec", "contract", "dnssec", "dnssec/dnssectest", "store/queue",
		"sandbox/canary", "sandbox/image", "sandbox/sink", "sandbox/tracer", "judge/judgetest", "supplychain/supplytest",
		"internal/...", "bench/internal/benchutil"}},
	{"plumbing", "what the clients of third parties share (errors, retry, reachability, cache keys); the answer cache", []string{
		"internal/thirdparty", "cache"}},
	{"ecosystems", "one package ecosystem's names, pins, package URLs and lockfile", []string{
		"ecosystem/npm", "ecosystem/pypi", "ecosystem/oci", "ecosystem/mcpb"}},
	{"ecosystem", "the list of ecosystems, and what any layer may ask of one", []string{"ecosystem"}},
	{"image contents", "what an image's filesystem holds, read with osv-scalibr's extractors", []string{"ecosystem/oci/imagefs"}},
	{"model", "what is read and stored, without scoring; the page's static files", []string{
		"evidence", "contract/inspector", "contract/checks", "clientconfig", "sandbox/exercise", "sandbox/sink/internal/sinkd", "web"}},
	{"scoring and collectors", "score evidence; ask one third party, registry or model", []string{
		"rubric", "supplychain", "judge", "store"}},
	{"collectors, outputs", "the sandbox, the outputs of one run", []string{
		"sandbox", "report", "rescore", "benchmark"}},
	{"shipped ecosystems", "an image's or a bundle's targets, and how the sandbox makes it ready to run", []string{
		"ecosystem/oci/ocirun", "ecosystem/mcpb/mcpbrun"}},
	{"config output", "the config report, written with the report's writers", []string{"report/configreport"}},
	{"one scan", "a target end to end", []string{
		"pipeline", "web/configscan", "benchmark/realcorpus"}},
	{"many scans", "batches, the fleet, their outputs, the corpus tools", []string{
		"pipeline/batch", "benchmark/realcorpus/findings", "benchmark/realcorpus/importscans", "web/buildweb", "web/wasm"}},
	{"outputs of many scans", "", []string{"report/batchreport"}},
	{"commands", "flags, wiring, exit codes", []string{"cmd/verifymcp/cli", "bench/..."}},
	{"main", "", []string{"cmd/verifymcp"}},
}

// Tier is one layer of the graph.
type Tier struct {
	Name, What string
	Packages   []string
}
