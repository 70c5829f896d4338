package sandbox

import (
	"regexp"
	"sort"
	"strings"
)

// secretPatterns match credentials that commonly appear in server logs.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\b(AKIA|ASIA)[A-Z0-9]{16}\b`),                                     // AWS access key id
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`),                                  // GitHub tokens
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}\b`),                                // GitHub fine-grained
	regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}\b`),                                      // OpenAI-style keys
	regexp.MustCompile(`\bnpm_[A-Za-z0-9]{30,}\b`),                                        // npm tokens
	regexp.MustCompile(`\bxox[abpors]-[A-Za-z0-9-]{10,}\b`),                               // Slack tokens
	regexp.MustCompile(`(?i)\b(bearer|token|authorization)[=: ]+[A-Za-z0-9._\-+/=]{12,}`), // bearer tokens
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`),
}

// secretAssignment matches "API_TOKEN=value", "password: value" and the like.
var secretAssignment = regexp.MustCompile(`(?i)(\b[a-z0-9_.-]*(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|private[_-]?key|credential)s?[a-z0-9_.-]*)("?\s*[=:]\s*["']?)[^\s"',;]+`)

// Redact removes secrets from text that leaves the sandbox as evidence:
// every value the operator passed with --env, and anything shaped like a
// common credential.
func Redact(text string, values []string) string {
	vs := append([]string(nil), values...)
	// Longest first, so a value that contains another is removed whole.
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	for _, v := range vs {
		if len(v) >= 4 {
			text = strings.ReplaceAll(text, v, "[REDACTED]")
		}
	}
	for _, re := range secretPatterns {
		text = re.ReplaceAllString(text, "[REDACTED]")
	}
	// NAME=value where the name says it holds a secret: keep the name.
	return secretAssignment.ReplaceAllString(text, "${1}${2}[REDACTED]")
}
