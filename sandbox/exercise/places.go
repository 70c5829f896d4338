package exercise

// Places are what generated arguments point at: all values the sandbox made
// up, never secrets.
type Places struct {
	// Scratch is the scratch directory, the client's root.
	Scratch string
	// Decoys are the files planted in Scratch.
	Decoys []Decoy
	// URL is a URL on a name the sink answers.
	URL string
	// Host is the host name of URL.
	Host string
	// Email is a placeholder mail address.
	Email string
}

// Decoy is one file planted in the scratch directory.
type Decoy struct {
	// Path is relative to Scratch, slash-separated.
	Path string
	Data []byte
}

// DefaultPlaces returns the places the sandbox plants: a scratch directory
// with five short, plausible project files, a URL on a name the sink answers
// and a placeholder mail address.
func DefaultPlaces() Places {
	return Places{
		Scratch: "/home/sandbox/work",
		Decoys: []Decoy{
			{Path: "notes.txt", Data: []byte("Project notes\n\n- Kick-off meeting moved to Thursday.\n- Draft the onboarding guide before the next release.\n- Ask the design team for the updated icons.\n")},
			{Path: "todo.md", Data: []byte("# To do\n\n- [x] Set up the repository\n- [ ] Write the first chapter of the guide\n- [ ] Review the quarterly report\n")},
			{Path: "data/report.csv", Data: []byte("month,visitors,signups\n2026-01,1200,48\n2026-02,1350,52\n2026-03,1410,61\n")},
			{Path: "data/config.json", Data: []byte("{\n  \"title\": \"Team handbook\",\n  \"language\": \"en\",\n  \"page_size\": 20,\n  \"theme\": \"light\"\n}\n")},
			{Path: "docs/plan.md", Data: []byte("# Plan\n\n1. Collect feedback from the pilot group.\n2. Update the guide with the answers.\n3. Publish the second edition in May.\n")},
		},
		URL:   "https://docs.example.com/guide/index.html",
		Host:  "docs.example.com",
		Email: "jordan.lee@example.com",
	}
}

// Map returns the places as named values: url, host, email and scratch.
func (p Places) Map() map[string]string {
	return map[string]string{
		"url":     p.URL,
		"host":    p.Host,
		"email":   p.Email,
		"scratch": p.Scratch,
	}
}

// file returns the path of the first decoy, the file a path-like argument
// points at, or the scratch directory itself when there is no decoy.
func (p Places) file() string {
	if len(p.Decoys) == 0 {
		return p.Scratch
	}
	return p.Scratch + "/" + p.Decoys[0].Path
}
