package cli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/verifymcp/verifymcp/report"
)

// checkFormat checks --format against the formats of output o: those of
// the package report (report.OutputPackageReport), of the config report
// (report.OutputConfigReport), or of every other output (summaries,
// listings) that comes as a table or JSON (report.OutputOther).
func checkFormat(o report.Output, format string) (report.Format, error) {
	f, err := report.ParseFormat(o, format)
	if err != nil {
		return "", usagef("--format %v", err)
	}
	return f, nil
}

// checkOutput checks --output before anything runs, so that a path the
// report cannot be written to fails as bad input before a scan is spent on
// it and before anything touches the engine: the directory must exist and
// take a new file, and the path must not be a directory. An existing
// device or pipe (/dev/stdout) is written in place and must open for
// writing.
func checkOutput(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return usagef("--output %s is a directory", path)
		case !fi.Mode().IsRegular():
			if fi.Mode()&fs.ModeNamedPipe != 0 {
				return nil // opening a pipe for writing waits for its reader
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return usagef("--output: %v", err)
			}
			return f.Close()
		}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return usagef("--output %s: its directory: %v", path, err)
	case !fi.IsDir():
		return usagef("--output %s: %s is not a directory", path, dir)
	}
	// Writable is what a new file there says, not the mode bits (root,
	// read-only mounts, ACLs).
	probe, err := os.CreateTemp(dir, ".verifymcp-output-*")
	if err != nil {
		return usagef("--output %s: cannot write in %s: %v", path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// writeOutput runs write on stdout, or writes what it produces to the file
// output names, atomically: a failed write leaves no partial or empty file
// (an existing one keeps its content), and a regular file is replaced only
// once the whole output is there.
func (g *globals) writeOutput(output string, write func(io.Writer) error) error {
	if output == "" {
		return write(g.stdout)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	if err := writeOutputFile(output, buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", output, err)
	}
	return nil
}

// writeOutputFile writes data to path: in place for a device or a pipe,
// else through a temporary file in the same directory renamed over path,
// keeping an existing file's mode (0644 for a new one).
func writeOutputFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return err
			}
			if _, err := f.Write(data); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rename %s: %w", filepath.Base(tmp.Name()), err)
	}
	return nil
}

// writeReport writes a package report in format to output ("" for
// stdout). A table is for a person: the summary and the findings first,
// wrapped to the width tableOptions gives, coloured at a terminal unless
// NO_COLOR; everything with --verbose. After a failed gate, a report that
// is not a table on stdout is followed on stderr by what to do about each
// code that failed it (the table has it in its GATE FAILED section).
func (g *globals) writeReport(rep report.Report, format report.Format, output string, sarif report.SARIFOptions) error {
	o := g.tableOptions(output)
	err := g.writeOutput(output, func(w io.Writer) error {
		var err error
		switch format {
		case report.FormatTable:
			err = report.WriteTableFor(w, rep, o)
		case report.FormatSARIF:
			err = report.WriteSARIF(w, rep, nil, sarif)
		default:
			err = report.Write(w, format, rep)
		}
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		return nil
	})
	if err != nil || (format == report.FormatTable && output == "") {
		return err
	}
	return report.WriteGateAdvice(g.stderr, rep, report.TableOptions{Width: writerWidth(g.stderr), Now: o.Now})
}

// tableOptions are the options of a table written to output ("" for
// stdout): the width of the terminal when stdout is one, else $COLUMNS
// when it is a number, else report.DefaultWidth (80, also for a file);
// colour at a terminal unless NO_COLOR is set; --verbose; and now, which
// dates the ignore entries a failed gate suggests.
func (g *globals) tableOptions(output string) report.TableOptions {
	o := report.TableOptions{Verbose: g.verbose, Now: time.Now()}
	if output == "" {
		o.Width = writerWidth(g.stdout)
		o.Color = isTerminal(g.stdout) && os.Getenv("NO_COLOR") == ""
	} else {
		o.Width = columns(os.Getenv("COLUMNS"))
	}
	return o
}

// writerWidth is the width of the terminal w writes to, else $COLUMNS
// when it is a number, else 0 (report.DefaultWidth).
func writerWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return columns(os.Getenv("COLUMNS"))
}

// columns reads $COLUMNS: a positive number of columns, else 0 (the
// default). The report reads a width under 60 as 60.
func columns(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
