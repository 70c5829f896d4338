package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/verifymcp/verifymcp/contract"
)

// PinSchemaVersion and DiffSchemaVersion identify the JSON of pin and diff.
const (
	PinSchemaVersion  = "verifymcp.pin/v1"
	DiffSchemaVersion = "verifymcp.diff/v1"
)

// PinStatement is what every pin output says of a pin.
const PinStatement = "A pin is the baseline contract of a server identity, trusted on its first scan or accepted by an operator. " +
	"It is not a statement that the server was honest then: later scans are measured against it, not against honest."

// Identity is a server identity: the package, its arguments and the names
// of its placeholder environment.
type Identity struct {
	Key       string   `json:"key"`
	Ecosystem string   `json:"ecosystem"`
	Name      string   `json:"name"`
	Args      []string `json:"args"`
	EnvNames  []string `json:"env_names"`
}

// PinEntry is one baseline of an identity.
type PinEntry struct {
	Seq      int    `json:"seq"`
	RunID    string `json:"run_id"`
	RunDate  string `json:"run_date"`
	Version  string `json:"version"`
	PinnedBy string `json:"pinned_by"`
	PinnedAt string `json:"pinned_at"`
	Reason   string `json:"reason"`
}

// Surface summarises a pinned contract.
type Surface struct {
	SchemaHash   string   `json:"schema_hash"`
	Server       string   `json:"server"`
	Tools        []string `json:"tools"`
	Prompts      []string `json:"prompts"`
	Resources    []string `json:"resources"`
	Templates    []string `json:"resource_templates"`
	Instructions bool     `json:"instructions"`
}

// SurfaceOf summarises c.
func SurfaceOf(c *contract.Contract) *Surface {
	if c == nil {
		return nil
	}
	s := &Surface{SchemaHash: c.SchemaHash, Server: strings.TrimSpace(c.ServerInfo.Name + " " + c.ServerInfo.Version),
		Tools: []string{}, Prompts: []string{}, Resources: []string{}, Templates: []string{}, Instructions: c.Instructions != ""}
	for _, t := range c.Tools {
		s.Tools = append(s.Tools, t.Name)
	}
	for _, p := range c.Prompts {
		s.Prompts = append(s.Prompts, p.Name)
	}
	for _, r := range c.Resources {
		s.Resources = append(s.Resources, r.URI)
	}
	for _, t := range c.Templates {
		s.Templates = append(s.Templates, t.URITemplate)
	}
	return s
}

// PinView is what pin show, pin accept and pin history print.
type PinView struct {
	SchemaVersion string   `json:"schema_version"`
	Identity      Identity `json:"identity"`
	// Current is the baseline in force; nil when the identity has no pin.
	Current *PinEntry `json:"current"`
	// Surface is the pinned contract (show and accept).
	Surface *Surface `json:"surface,omitempty"`
	// History lists every baseline, oldest first (history).
	History []PinEntry `json:"history,omitempty"`
	// Accepted are the changes from the previous baseline to the one just
	// accepted (accept).
	Accepted  []Change `json:"accepted,omitempty"`
	Statement string   `json:"statement"`
}

// WritePin writes a pin view.
func WritePin(w io.Writer, f Format, v PinView) error {
	v.SchemaVersion, v.Statement = PinSchemaVersion, PinStatement
	return write(w, f, indentedJSON(w, v), func() error { return writePinTable(w, v) })
}

func writePinTable(w io.Writer, v PinView) error {
	id := v.Identity
	fmt.Fprintf(w, "identity  %s:%s  args [%s]  env [%s]\n          %s\n", clean(id.Ecosystem), clean(id.Name),
		clean(strings.Join(id.Args, " ")), clean(strings.Join(id.EnvNames, " ")), clean(id.Key))
	if v.Current == nil {
		fmt.Fprintln(w, "pin       none: the identity's next scan will pin it (trust on first use)")
	} else {
		c := v.Current
		fmt.Fprintf(w, "pin       #%d  run %s of %s  version %s\n          pinned by %s at %s%s\n", c.Seq, clean(c.RunID), c.RunDate,
			clean(c.Version), clean(c.PinnedBy), c.PinnedAt, reasonText(c.Reason))
	}
	if s := v.Surface; s != nil {
		fmt.Fprintf(w, "contract  %s  server %s\n          %d tools, %d prompts, %d resources, %d templates, instructions %s\n", s.SchemaHash, clean(s.Server),
			len(s.Tools), len(s.Prompts), len(s.Resources), len(s.Templates), yesNo(s.Instructions))
		if len(s.Tools) > 0 {
			fmt.Fprintf(w, "          tools: %s\n", clean(strings.Join(s.Tools, ", ")))
		}
	}
	if len(v.History) > 0 {
		fmt.Fprintln(w, "\nHISTORY")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tRUN\tVERSION\tRUN DATE\tPINNED BY\tPINNED AT\tREASON")
		for _, e := range v.History {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, clean(e.RunID), clean(e.Version), e.RunDate, clean(e.PinnedBy), e.PinnedAt, orDash(clean(e.Reason)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if v.Accepted != nil {
		fmt.Fprintln(w, "\nACCEPTED (changes from the previous baseline)")
		if err := writeChanges(w, v.Accepted); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", PinStatement)
	return err
}

func reasonText(r string) string {
	if r == "" {
		return ""
	}
	return ": " + clean(r)
}

// DiffSide is one side of a diff: a stored run.
type DiffSide struct {
	RunID      string `json:"run_id"`
	Target     string `json:"target"`
	RunDate    string `json:"run_date"`
	SchemaHash string `json:"schema_hash"`
	// Scanned is set when diff scanned the side because it was not stored
	// (or --rescan asked).
	Scanned bool `json:"scanned"`
}

// DiffView is what diff prints: the classified change from A to B.
type DiffView struct {
	SchemaVersion string         `json:"schema_version"`
	A             DiffSide       `json:"a"`
	B             DiffSide       `json:"b"`
	Changes       []Change       `json:"changes"`
	Counts        map[string]int `json:"counts"`
	Surfaced      int            `json:"surfaced"`
	Safety        int            `json:"safety"`
	Statement     string         `json:"statement"`
}

// DiffStatement is what every diff says of itself.
const DiffStatement = "The classified difference between two captured contracts. " +
	"No change is sameness of what the servers declared, not a statement that either is honest."

// NewDiffView builds the view of the changes from a to b.
func NewDiffView(a, b DiffSide, cs []contract.Change) DiffView {
	v := DiffView{SchemaVersion: DiffSchemaVersion, A: a, B: b, Changes: changes(cs), Counts: map[string]int{}, Statement: DiffStatement}
	for _, c := range cs {
		v.Counts[string(c.Kind)]++
		if c.Surfaced {
			v.Surfaced++
		}
		if c.Safety {
			v.Safety++
		}
	}
	return v
}

// WriteDiff writes a diff view.
func WriteDiff(w io.Writer, f Format, v DiffView) error {
	return write(w, f, indentedJSON(w, v), func() error {
		for _, s := range []struct {
			label string
			side  DiffSide
		}{{"A", v.A}, {"B", v.B}} {
			how := "stored"
			if s.side.Scanned {
				how = "scanned now"
			}
			fmt.Fprintf(w, "%s  %s  run %s of %s (%s)  %s\n", s.label, clean(s.side.Target), clean(s.side.RunID), s.side.RunDate, how, s.side.SchemaHash)
		}
		fmt.Fprintf(w, "\n%d changes, %d surfaced, %d with the safety bit\n", len(v.Changes), v.Surfaced, v.Safety)
		if err := writeChanges(w, v.Changes); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "\n%s\n", DiffStatement)
		return err
	})
}

// writeChanges lists changes, the surfaced with the safety bit first,
// then the recorded ones with their counts.
func writeChanges(w io.Writer, cs []Change) error {
	sf := SafetyFirst(cs)
	if len(sf) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KIND\tSAFETY\tSUBJECT\tCHANGE")
		for _, c := range sf {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", clean(c.Kind), yesNo(c.Safety), clean(c.Subject), clean(changeText(c)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "  no surfaced change")
	}
	if n := recordedOnly(cs); n != "" {
		fmt.Fprintf(w, "  recorded but not surfaced: %s\n", n)
	}
	return nil
}
