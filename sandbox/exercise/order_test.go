package exercise

import (
	"reflect"
	"testing"

	"github.com/verifymcp/verifymcp/contract"
)

func TestOrder(t *testing.T) {
	yes, no := true, false
	tool := func(name string, a *contract.Annotations) contract.Tool {
		return contract.Tool{Name: name, Annotations: a}
	}
	tools := []contract.Tool{
		tool("delete_file", nil), // unannotated, destructive verb
		tool("write_file", &contract.Annotations{DestructiveHint: &yes}), // explicit
		tool("read_file", &contract.Annotations{ReadOnlyHint: &yes}),
		tool("send_mail", nil),
		tool("dropTable", &contract.Annotations{DestructiveHint: &no}), // explicit false beats the name
		tool("list_dir", &contract.Annotations{ReadOnlyHint: &yes, DestructiveHint: &yes}),
		tool("github_remove_repo", nil),                            // prefix before the verb
		tool("purge_cache", &contract.Annotations{Title: "Purge"}), // annotated without hints: not read from the name
		tool("get_deleted_items", nil),                             // first verb is get
		tool("rm", nil),
		tool("search", &contract.Annotations{ReadOnlyHint: &no}),
		tool("clearHistory", nil),
		tool("KillProcess", nil),
	}
	var got []string
	for _, tl := range Order(tools) {
		got = append(got, tl.Name)
	}
	want := []string{
		"read_file", "list_dir",
		"send_mail", "dropTable", "purge_cache", "get_deleted_items", "search",
		"delete_file", "write_file", "github_remove_repo", "rm", "clearHistory", "KillProcess",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Order = %v\nwant    %v", got, want)
	}
	if tools[0].Name != "delete_file" {
		t.Error("Order changed its argument")
	}
	if len(Order(nil)) != 0 {
		t.Error("Order(nil) is not empty")
	}
}

func TestDestructiveName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"delete_file", true}, {"deleteFile", true}, {"Delete-File", true}, {"rm", true},
		{"uninstall", true}, {"revoke_token", true}, {"unlink", true}, {"truncate_table", true},
		{"db_drop_table", true}, {"get_deleted_items", false}, {"read_file", false},
		{"undelete", false}, {"resetable", false}, {"my_app_helper_delete", false}, {"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := destructiveName(tt.name); got != tt.want {
				t.Errorf("destructiveName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"filePath", []string{"file", "path"}},
		{"HTMLFile", []string{"html", "file"}},
		{"user_email-address", []string{"user", "email", "address"}},
		{"toAddresses", []string{"to", "addresses"}},
		{"v2Name", []string{"v2", "name"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := words(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
