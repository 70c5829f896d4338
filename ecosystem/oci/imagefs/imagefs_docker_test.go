//go:build docker

package imagefs

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// dockerTestImage is a Debian-based image in the local engine:
// VERIFYMCP_OCI_TEST_IMAGE, else the newest verifymcp-sandbox image the
// sandbox built.
func dockerTestImage(t *testing.T) string {
	t.Helper()
	if img := os.Getenv("VERIFYMCP_OCI_TEST_IMAGE"); img != "" {
		return img
	}
	out, err := exec.Command("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "verifymcp-sandbox").Output()
	if err != nil {
		t.Fatalf("docker images: %v", err)
	}
	imgs := strings.Fields(string(out))
	if len(imgs) == 0 {
		t.Fatal("no Debian-based image to inventory: set VERIFYMCP_OCI_TEST_IMAGE or build the sandbox image")
	}
	return imgs[0]
}

// TestInventoryDockerExport inventories a real image's filesystem as the
// engine's container export streams it, and checks the Debian packages
// against what dpkg itself says is installed in that image.
func TestInventoryDockerExport(t *testing.T) {
	img := dockerTestImage(t)
	id, err := exec.Command("docker", "create", "--network", "none", img).Output()
	if err != nil {
		t.Fatalf("docker create %s: %v", img, err)
	}
	cid := strings.TrimSpace(string(id))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", cid).Run() })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	export := exec.CommandContext(ctx, "docker", "export", cid)
	stdout, err := export.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := export.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := Inventory(ctx, stdout, Limits{})
	if werr := export.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		t.Fatalf("Inventory of %s: %v", img, err)
	}
	if c.OSRelease.ID != "debian" || c.OSRelease.VersionID == "" {
		t.Fatalf("oci.OSRelease = %+v, want Debian's", c.OSRelease)
	}
	if !c.HasBash || !c.HasSh || c.Files < 1000 || len(c.Skipped) != 0 {
		t.Errorf("HasBash %v, HasSh %v, Files %d, Skipped %v: want a Debian image's shells, files and no failure", c.HasBash, c.HasSh, c.Files, c.Skipped)
	}

	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", "none", "--entrypoint", "dpkg-query", img,
		"-W", "-f", "${db:Status-Abbrev} ${Package} ${Version}\n").Output()
	if err != nil {
		t.Fatalf("dpkg-query in %s: %v", img, err)
	}
	var want []string
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "ii" {
			want = append(want, f[1]+" "+f[2])
		}
	}
	var got []string
	eco := "Debian:" + c.OSRelease.VersionID
	for _, p := range c.Packages {
		if p.Extractor != "os/dpkg" {
			continue
		}
		if p.Ecosystem != eco || !strings.HasPrefix(p.Purl, "pkg:deb/debian/") {
			t.Errorf("package %+v: want ecosystem %s and a Debian purl", p, eco)
		}
		got = append(got, p.Name+" "+p.Version)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 {
		t.Fatal("dpkg-query listed no installed package")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dpkg packages (-dpkg-query +Inventory):\n%s", diff)
	}
}
