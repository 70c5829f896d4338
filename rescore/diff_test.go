package rescore

import (
	"encoding/json"
	"strings"
)

// diff returns a line diff of want and got as indented JSON, "-" for lines
// only in want and "+" for lines only in got, or "" when they are equal.
func diff(want, got any) string {
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return "marshal want: " + err.Error()
	}
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		return "marshal got: " + err.Error()
	}
	if string(w) == string(g) {
		return ""
	}
	return lineDiff(strings.Split(string(w), "\n"), strings.Split(string(g), "\n"))
}

// lineDiff is a longest-common-subsequence diff; inputs are small.
func lineDiff(a, b []string) string {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			sb.WriteString("- " + a[i] + "\n")
			i++
		default:
			sb.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return sb.String()
}
