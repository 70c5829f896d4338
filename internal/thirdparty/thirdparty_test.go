package thirdparty

import "testing"

// TestCacheKeyStable pins the key of a part list: cached answers and
// judgments are stored under these keys, so a change would miss them all.
func TestCacheKeyStable(t *testing.T) {
	if got, want := CacheKey("a", "", "b;c"), "a971740e7d9286c0f5a4b86eb8279a90fe566891014199c7c410cdc1bdc97ea2"; got != want {
		t.Errorf("CacheKey = %s, want %s", got, want)
	}
	if CacheKey("ab", "c") == CacheKey("a", "bc") {
		t.Error("CacheKey(ab, c) and CacheKey(a, bc) collide")
	}
}
