package sandbox

// SetMaxMetaRounds sets the bound of metadata steps, for the tests; the
// function it returns restores it.
func SetMaxMetaRounds(n int) func() {
	old := maxMetaRounds
	maxMetaRounds = n
	return func() { maxMetaRounds = old }
}
