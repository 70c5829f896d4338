package rubric

import (
	"strings"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
)

// TestActionContradiction: from rubric v11 a read-only claim is
// contradicted by the tool's own action, never by a write verb anywhere
// in its name. The texts are those of real servers, paraphrased: a
// WordPress server's read_post and list_post_types, an accessibility
// server's "Run Accessibility Scan", a migration planner whose create tool
// says nothing is written, a Jira server's getter of the fields a create
// form needs. Rubric v10 reported each as a read-only tool that writes;
// the positive controls fire under both.
func TestActionContradiction(t *testing.T) {
	tool := func(name, title, desc string) contract.Tool {
		return contract.Tool{Name: name, Title: title, Description: desc, Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}
	}
	tests := []struct {
		name  string
		tools []contract.Tool
		v10   []string // contradictions under v10 (the subjects)
		v11   []string // and under v11
	}{
		{
			name: "a_noun_that_is_also_a_verb",
			tools: []contract.Tool{
				tool("wp_read_post", "", "Read a single post by its ID, with its title, content and status."),
				tool("wp_list_post_types", "", "List the post types registered on the site."),
				{Name: "wp_create_post", Description: "Create a new post."},
			},
			v10: []string{"wp_list_post_types", "wp_read_post"},
		},
		{
			name: "running_is_not_writing",
			tools: []contract.Tool{
				tool("run_accessibility_audit", "Run Accessibility Scan", "Runs an axe-core audit of the page and returns the violations."),
				tool("run_performance_audit", "", "Runs a Lighthouse performance audit of the URL."),
			},
			v10: []string{"run_accessibility_audit", "run_performance_audit"},
		},
		{
			name: "the_description_says_nothing_is_written",
			tools: []contract.Tool{
				tool("create_migration_plan", "", "Create a step-by-step plan to migrate the schema. Nothing is written to the database: the plan is returned as text."),
			},
			v10: []string{"create_migration_plan"},
		},
		{
			// A music service's planner (tuning corpus, elevenlabs-mcp):
			// the plan is computed and returned.
			name: "creating_a_plan_computes_it",
			tools: []contract.Tool{
				tool("create_composition_plan", "", "Create a composition plan for music generation. Usage of this endpoint does not cost any credits. The returned plan shape depends on model_id."),
			},
			v10: []string{"create_composition_plan"},
		},
		{
			name: "a_getter_of_what_a_create_form_needs",
			tools: []contract.Tool{
				tool("jira_get_create_fields", "", "Get the fields required to create an issue of a given type in a project."),
				{Name: "jira_create_issue", Description: "Create a Jira issue."},
			},
			v10: []string{"jira_get_create_fields"},
		},
		{
			name: "a_name_read_as_a_noun_by_its_description",
			tools: []contract.Tool{
				tool("post_types", "", "Lists the registered post types."),
				tool("posts", "", "Posts are returned newest first."),
			},
			v10: []string{"post_types"},
		},
		{
			name: "the_tools_own_action_still_contradicts",
			tools: []contract.Tool{
				tool("wp_delete_post", "", "Move a post to the trash."),
				tool("wp_publish_post", "", ""),
				tool("notes", "Send Email", ""),
				tool("note", "", "Deletes the note with the given id."),
				tool("updateSettings", "", "Update the site's settings."),
			},
			v10: []string{"notes", "updateSettings", "wp_delete_post", "wp_publish_post"},
			// wp_ is not a prefix every tool of this server shares, so
			// wp_publish_post's action is not read from its name; its
			// empty description says nothing either.
			v11: []string{"note", "notes", "updateSettings", "wp_delete_post"},
		},
		{
			name: "after_the_prefix_every_tool_shares",
			tools: []contract.Tool{
				tool("wp_publish_post", "", ""),
				tool("wp_get_post", "", "Get a post."),
				{Name: "wp_trash_post", Description: "Trash a post."},
			},
			v10: []string{"wp_get_post", "wp_publish_post"},
			v11: []string{"wp_publish_post"},
		},
	}
	contradictions := func(version string, tools []contract.Tool) []string {
		b := okBundle()
		b.Contract.Tools = tools
		var out []string
		for _, f := range Evaluate(b, mustLoad(t, version)).Findings {
			if f.Code == CodeAnnotationContradiction {
				out = append(out, f.Subject)
			}
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contradictions("10", tt.tools); strings.Join(got, ",") != strings.Join(tt.v10, ",") {
				t.Errorf("v10 contradictions %v, want %v", got, tt.v10)
			}
			if got := contradictions("11", tt.tools); strings.Join(got, ",") != strings.Join(tt.v11, ",") {
				t.Errorf("v11 contradictions %v, want %v", got, tt.v11)
			}
		})
	}
}

// TestActionContradictionMessage: the finding names the field that gives
// the action and quotes it.
func TestActionContradictionMessage(t *testing.T) {
	b := okBundle()
	b.Contract.Tools = []contract.Tool{{Name: "note", Description: "Deletes the note with the given id.", Annotations: &contract.Annotations{ReadOnlyHint: ptr(true)}}}
	var got []Finding
	for _, f := range Evaluate(b, mustLoad(t, "11")).Findings {
		if f.Code == CodeAnnotationContradiction {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("findings %+v, want one contradiction", got)
	}
	if !strings.Contains(got[0].Message, `its description puts it to "delete"`) || !strings.Contains(got[0].Evidence, `description "Deletes the note`) {
		t.Errorf("finding %+v", got[0])
	}
}
