package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// ---------------------------------------------------------------- TSV

func clean(s string) string {
	s = strings.NewReplacer("\t", " ", "\r", " ", "\n", " ").Replace(s)
	return strings.TrimSpace(s)
}

func writeTSV(path string, header []string, n int, row func(int) []string) error {
	var sb strings.Builder
	sb.WriteString(strings.Join(header, "\t") + "\n")
	for i := 0; i < n; i++ {
		f := row(i)
		for j := range f {
			f[j] = clean(f[j])
		}
		sb.WriteString(strings.Join(f, "\t") + "\n")
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(sb.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readTSV returns the rows of a TSV file as maps keyed by its header.
func readTSV(path string) ([]map[string]string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var header []string
	var rows []map[string]string
	for sc.Scan() {
		line := sc.Text()
		if header == nil {
			header = strings.Split(line, "\t")
			continue
		}
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(header) {
			return nil, nil, fmt.Errorf("%s: %d fields, want %d: %q", path, len(f), len(header), line)
		}
		m := map[string]string{}
		for i, h := range header {
			m[h] = f[i]
		}
		rows = append(rows, m)
	}
	return rows, header, sc.Err()
}
