package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/verifymcp/verifymcp/ecosystem/oci"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/supplychain"
)

// packageOSV is an OSV client that looks up package lists, recording them.
type packageOSV struct {
	lockfiles int
	asked     []supplychain.PackageRef
}

func (o *packageOSV) Scan(context.Context, []byte, string) (*evidence.OSVResult, supplychain.Fetch, error) {
	o.lockfiles++
	return &evidence.OSVResult{Vulnerabilities: []evidence.Vulnerability{}}, supplychain.Fetch{}, nil
}

func (o *packageOSV) ScanPackages(_ context.Context, pkgs []supplychain.PackageRef, _ string) (*evidence.OSVResult, supplychain.Fetch, error) {
	o.asked = append(o.asked, pkgs...)
	return &evidence.OSVResult{Packages: len(pkgs), Vulnerabilities: []evidence.Vulnerability{}}, supplychain.Fetch{}, nil
}

// TestShippedTreeScans: an image's inventory is asked about package by
// package, a bundle that ships no lockfile is not assessed (not an
// error), and an installed package's missing tree stays an error.
func TestShippedTreeScans(t *testing.T) {
	o := &packageOSV{}
	p := &Pipeline{cfg: Config{Supply: Supply{OSV: o}}}
	inv := (&oci.Contents{Packages: []oci.Package{
		{Purl: "pkg:deb/debian/libc6@2.36-9?distro=debian-12", Ecosystem: "Debian:12", Name: "libc6", Version: "2.36-9"},
		{Purl: "pkg:npm/left-pad@1.3.0", Ecosystem: "npm", Name: "left-pad", Version: "1.3.0"},
		{Purl: "pkg:generic/unknown@1", Name: "unknown", Version: "1"},
	}}).Lockfile()
	a := p.collectTree(context.Background(), treeInput{name: "img", ecosystem: "oci", outcome: evidence.OutcomeOK, shipped: true}, inv, true, false)
	var names []string
	for _, r := range o.asked {
		names = append(names, r.Ecosystem+"/"+r.Name)
	}
	if a.osvSig.State != evidence.StateObserved || o.lockfiles != 0 || !slices.Equal(names, []string{"Debian:12/libc6", "npm/left-pad"}) {
		t.Errorf("image: signal %+v, lockfile scans %d, asked %v", a.osvSig, o.lockfiles, names)
	}
	b := p.collectTree(context.Background(), treeInput{name: "bundle", ecosystem: "mcpb", outcome: evidence.OutcomeOK, shipped: true}, nil, true, false)
	if b.osvSig.State != evidence.StateNotAssessed {
		t.Errorf("a bundle with no lockfile: %+v, want not assessed", b.osvSig)
	}
	c := p.collectTree(context.Background(), treeInput{name: "pkg", ecosystem: "npm", outcome: evidence.OutcomeInstallFailed}, nil, true, false)
	if c.osvSig.State != evidence.StateError {
		t.Errorf("a package that did not install: %+v, want error", c.osvSig)
	}
}
