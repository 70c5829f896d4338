package mcpb

import "slices"

// Comparison is what a manifest declares against what its server serves.
type Comparison struct {
	// DeclaredNotServed are declared names the server did not list.
	DeclaredNotServed Names
	// ServedNotDeclared are served names the manifest did not declare.
	ServedNotDeclared Names
	Tools, Prompts    Checked
}

// Names are tool and prompt names, sorted.
type Names struct{ Tools, Prompts []string }

// Checked says which directions of one kind were compared, and why one
// was not.
type Checked struct {
	Declared bool   // declared names were looked for among the served ones
	Served   bool   // served names were looked for among the declared ones
	Reason   string // why a direction was not compared; "" when both were
}

// Compare compares the names a manifest declares with the names its
// server listed, exactly. A manifest without a tools (prompts) key
// declares nothing, so that kind is not compared; an empty list declares
// that there are none. tools_generated (prompts_generated) means the
// server makes more at run time than the manifest lists (MANIFEST.md,
// Dynamic Generation): the declared names must still be served, but a
// served name that is not declared is expected.
func Compare(m *Manifest, servedTools, servedPrompts []string) Comparison {
	var c Comparison
	var declared []string
	for _, t := range m.Tools {
		declared = append(declared, t.Name)
	}
	c.Tools, c.DeclaredNotServed.Tools, c.ServedNotDeclared.Tools =
		compareKind("tools", m.Tools != nil, m.ToolsGenerated, declared, servedTools)
	declared = nil
	for _, p := range m.Prompts {
		declared = append(declared, p.Name)
	}
	c.Prompts, c.DeclaredNotServed.Prompts, c.ServedNotDeclared.Prompts =
		compareKind("prompts", m.Prompts != nil, m.PromptsGenerated, declared, servedPrompts)
	return c
}

func compareKind(kind string, present, generated bool, declared, served []string) (Checked, []string, []string) {
	if !present {
		return Checked{Reason: "the manifest has no " + kind + " key"}, nil, nil
	}
	ch := Checked{Declared: true, Served: !generated}
	if generated {
		ch.Reason = kind + "_generated: the server adds " + kind + " at run time"
	}
	var notServed, notDeclared []string
	for _, d := range declared {
		if !slices.Contains(served, d) && !slices.Contains(notServed, d) {
			notServed = append(notServed, d)
		}
	}
	if ch.Served {
		for _, s := range served {
			if !slices.Contains(declared, s) && !slices.Contains(notDeclared, s) {
				notDeclared = append(notDeclared, s)
			}
		}
	}
	slices.Sort(notServed)
	slices.Sort(notDeclared)
	return ch, notServed, notDeclared
}
