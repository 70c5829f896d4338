package sandbox

import "testing"

// TestBoundDriverOpts: each bounded place is a tmpfs with its size, file
// count, owner and mode (the sticky bit of /tmp included).
func TestBoundDriverOpts(t *testing.T) {
	o := Options{}
	o.defaults()
	want := map[string]string{
		"work-tree":    "size=2147483648,nr_inodes=262144,mode=0755,nosuid,nodev,uid=65534,gid=65534",
		"home-scripts": "size=536870912,nr_inodes=65536,mode=0700,nosuid,nodev,uid=65534,gid=65534",
		"tmp-run":      "size=268435456,nr_inodes=65536,mode=1777,nosuid,nodev",
	}
	for _, b := range o.bounds() {
		if w, ok := want[b.Part]; ok {
			if got := b.driverOpts(); got["type"] != "tmpfs" || got["o"] != w {
				t.Errorf("%s: %v, want o=%s", b.Part, got, w)
			}
			delete(want, b.Part)
		}
	}
	if len(want) > 0 {
		t.Errorf("parts missing: %v", want)
	}
}
