package sandbox

// Redact removes secrets from a text that is not part of a scan's evidence
// (the reason a third-party signal failed): the given values, each
// replaced by [secret:value], and anything shaped like a credential, by
// the same rules the scan's masking uses.
func Redact(text string, values []string) string {
	known := make([]Secret, 0, len(values))
	for _, v := range values {
		known = append(known, Secret{Name: "value", Value: v})
	}
	return newMasker(known, nil).text(text, "text")
}
