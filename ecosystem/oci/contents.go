package oci

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// Package is one package installed in an image.
type Package struct {
	// Purl is its package URL as osv-scalibr writes it (for a Debian
	// package with its arch, distro and source qualifiers).
	Purl string `json:"purl"`
	// Ecosystem is its OSV ecosystem: "Debian:12", "Alpine:v3.20", "npm",
	// "PyPI"; "" when the distribution is unknown.
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// Location is the file it was read from, relative to the root.
	Location string `json:"location"`
	// Extractor is the osv-scalibr extractor that read it (os/dpkg).
	Extractor string `json:"extractor"`
}

// OSRelease is what the image's os-release file says.
type OSRelease struct {
	ID        string `json:"id,omitempty"`
	VersionID string `json:"version_id,omitempty"`
}

// Contents is the inventory of an image's filesystem.
type Contents struct {
	Packages  []Package `json:"packages"`
	OSRelease OSRelease `json:"os_release"`
	// HasBash and HasSh are true when the filesystem has a regular file,
	// a hard link or a symlink at /bin/bash or /usr/bin/bash (/bin/sh,
	// /usr/bin/sh): whether a shell is there to be run.
	HasBash bool `json:"has_bash"`
	HasSh   bool `json:"has_sh"`
	// Files is the number of regular files in the filesystem.
	Files int `json:"files"`
	// Skipped lists the files an extractor failed on ("path: extractor:
	// error"); their packages are missing from Packages.
	Skipped []string `json:"skipped"`
}

// InventorySchema names the form of Lockfile's JSON (and of a kept
// inventory).
const InventorySchema = "verifymcp/oci-inventory/1"

// Sort puts the packages in a stable order, without repeats.
func (c *Contents) Sort() {
	slices.SortFunc(c.Packages, func(a, b Package) int {
		return cmp.Or(
			cmp.Compare(a.Ecosystem, b.Ecosystem), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Location, b.Location), cmp.Compare(a.Extractor, b.Extractor), cmp.Compare(a.Purl, b.Purl))
	})
	c.Packages = slices.Compact(c.Packages)
	slices.Sort(c.Skipped)
}

type lockfile struct {
	Schema string `json:"schema"`
	*Contents
}

// Lockfile is the inventory as stable JSON (packages sorted), the
// "lockfile" of an image that Ecosystem.TreePurls and ReadLockfile read.
func (c *Contents) Lockfile() []byte {
	cp := *c
	cp.Packages = slices.Clone(c.Packages)
	cp.Skipped = slices.Clone(c.Skipped)
	if cp.Packages == nil {
		cp.Packages = []Package{}
	}
	if cp.Skipped == nil {
		cp.Skipped = []string{}
	}
	cp.Sort()
	b, err := json.MarshalIndent(lockfile{Schema: InventorySchema, Contents: &cp}, "", "  ")
	if err != nil {
		panic(err) // strings, ints and bools always marshal
	}
	return append(b, '\n')
}

// ReadLockfile reads what Lockfile writes.
func ReadLockfile(b []byte) (*Contents, error) {
	l := lockfile{Contents: &Contents{}}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("oci: read image inventory: %w", err)
	}
	if l.Schema != InventorySchema {
		return nil, fmt.Errorf("oci: read image inventory: schema %q, want %q", l.Schema, InventorySchema)
	}
	return l.Contents, nil
}
