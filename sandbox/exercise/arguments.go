package exercise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Bounds against hostile schemas.
const (
	// maxDepth bounds the nesting of generated values and of $ref chains.
	maxDepth = 32
	// maxSize bounds the generated arguments, in bytes of JSON.
	maxSize = 64 << 10
	// maxMinLength is the largest minLength honoured.
	maxMinLength = 4096
	// maxMinItems is the largest minItems honoured.
	maxMinItems = 64
	// maxSteps bounds the work: schema nodes visited (branches tried
	// included) and keywords copied while merging.
	maxSteps = 200000
)

// boundError is an error of a bound on the whole generation: no other
// anyOf branch is tried after it.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

// generator holds the state of one Arguments call.
type generator struct {
	root  any
	p     Places
	size  int
	steps int
	// refs are the references followed on the current path, to tell a
	// recursive schema from a merely deep one.
	refs []string
	// choices cache the strings found for a string schema and name.
	choices map[string]*choice
}

// Arguments generates the arguments of one call from a tool's input schema
// (raw JSON Schema; nil or empty means no arguments). It returns the JSON
// object to send, or an error whose message says in one short sentence why
// the schema cannot be satisfied.
func Arguments(schema json.RawMessage, p Places) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return json.RawMessage("{}"), nil
	}
	root, err := decode(schema)
	if err != nil {
		return nil, fmt.Errorf("input schema is not valid JSON: %v", err)
	}
	g := &generator{root: root, p: p}
	top, err := g.flatten(root)
	if err != nil {
		return nil, err
	}
	g.refs = nil
	if !rootIsObject(top) {
		return json.RawMessage("{}"), nil
	}
	v, err := g.gen(root, "", "", 0, 0)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return json.RawMessage("{}"), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("arguments cannot be encoded: %v", err)
	}
	if len(out) > maxSize {
		return nil, fmt.Errorf("arguments would be larger than %d KiB", maxSize>>10)
	}
	return out, nil
}

// rootIsObject reports whether a flattened root schema describes an object
// with properties, or offers alternatives that may.
func rootIsObject(s *object) bool {
	for _, k := range []string{"anyOf", "oneOf"} {
		if _, ok := s.get(k); ok {
			return true
		}
	}
	if _, ok := s.vals["properties"].(*object); !ok {
		return false
	}
	ts := types(s)
	return len(ts) == 0 || slices.Contains(ts, "object")
}

// charge counts n units of work against maxSteps.
func (g *generator) charge(n int) error {
	g.steps += n
	if g.steps > maxSteps {
		return &boundError{"schema is too complex to generate arguments for"}
	}
	return nil
}

// merge is the package's merge, its copying charged as work.
func (g *generator) merge(a, b *object) (*object, error) {
	if err := g.charge(a.width() + b.width()); err != nil {
		return nil, err
	}
	if len(a.keys) == 0 {
		return b, nil
	}
	return merge(a, b)
}

// width is the number of keywords and properties of a schema, what merging
// it copies.
func (o *object) width() int {
	n := len(o.keys)
	if p, ok := o.vals["properties"].(*object); ok {
		n += len(p.keys)
	}
	return n
}

// add counts n bytes of output against maxSize.
func (g *generator) add(n int) error {
	g.size += n
	if g.size > maxSize {
		return &boundError{fmt.Sprintf("arguments would be larger than %d KiB", maxSize>>10)}
	}
	return nil
}

// flatten resolves node's $ref chain and merges its allOf branches, so that
// what is left are plain keywords and possibly anyOf/oneOf. The references
// followed are pushed on g.refs.
func (g *generator) flatten(node any) (*object, error) {
	s, err := asObject(node)
	if err != nil {
		return nil, err
	}
	if err := g.charge(1); err != nil {
		return nil, err
	}
	for hops := 0; ; hops++ {
		ref, ok := s.vals["$ref"].(string)
		if !ok {
			break
		}
		if hops >= maxDepth || len(g.refs) > 4*maxDepth {
			return nil, &boundError{fmt.Sprintf("schema is recursive past depth %d", maxDepth)}
		}
		target, err := lookup(g.root, ref)
		if err != nil {
			return nil, err
		}
		g.refs = append(g.refs, ref)
		t, err := asObject(target)
		if err != nil {
			return nil, err
		}
		if s, err = g.merge(without(s, "$ref"), t); err != nil {
			return nil, err
		}
	}
	all, ok := s.vals["allOf"].([]any)
	if !ok {
		return s, nil
	}
	s = without(s, "allOf")
	for _, b := range all {
		bs, err := g.flatten(b)
		if err != nil {
			return nil, err
		}
		if s, err = g.merge(s, bs); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// gen generates a value for node. path names the property for errors, name
// is the property name the heuristics read, variant asks for the n-th
// distinct value (for uniqueItems).
func (g *generator) gen(node any, path, name string, depth, variant int) (any, error) {
	if err := g.charge(1); err != nil {
		return nil, err
	}
	mark := len(g.refs)
	defer func() { g.refs = g.refs[:mark] }()
	s, err := g.flatten(node)
	if err != nil {
		return nil, prefix(path, err)
	}
	if depth > maxDepth {
		if g.recursive() {
			return nil, &boundError{fmt.Sprintf("schema is recursive past depth %d", maxDepth)}
		}
		return nil, &boundError{fmt.Sprintf("schema is nested past depth %d", maxDepth)}
	}
	if c, ok := s.get("const"); ok {
		return c, g.add(size(c))
	}
	if e, ok := s.vals["enum"].([]any); ok && len(e) > 0 {
		v := e[variant%len(e)]
		return v, g.add(size(v))
	}
	if d, ok := s.get("default"); ok && variant == 0 && allows(s, d) {
		return d, g.add(size(d))
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s.vals[k].([]any); ok && len(alts) > 0 {
			return g.alternatives(without(s, k), alts, path, name, depth, variant)
		}
	}
	switch kind(s) {
	case "object":
		return g.object(s, path, depth, variant)
	case "array":
		return g.array(s, path, name, depth, variant)
	case "integer":
		return g.number(s, path, true, variant)
	case "number":
		return g.number(s, path, false, variant)
	case "boolean":
		return variant%2 == 1, g.add(5)
	case "null":
		return nil, g.add(4)
	}
	return g.str(s, path, name, variant)
}

// recursive reports whether a reference was followed twice on the path.
func (g *generator) recursive() bool {
	seen := map[string]bool{}
	for _, r := range g.refs {
		if seen[r] {
			return true
		}
		seen[r] = true
	}
	return false
}

// alternatives generates the first anyOf/oneOf branch that can be
// satisfied, together with the keywords beside it; a branch that allows
// only null is tried last.
func (g *generator) alternatives(rest *object, alts []any, path, name string, depth, variant int) (any, error) {
	var nulls, order []any
	for _, a := range alts {
		if o, ok := a.(*object); ok && slices.Equal(types(o), []string{"null"}) {
			nulls = append(nulls, a)
			continue
		}
		order = append(order, a)
	}
	order = append(order, nulls...)
	var first error
	for _, a := range order {
		mark, size := len(g.refs), g.size
		b, err := g.flatten(a)
		if err == nil {
			var m *object
			if m, err = g.merge(rest, b); err == nil {
				var v any
				if v, err = g.gen(m, path, name, depth, variant); err == nil {
					return v, nil
				}
			}
		}
		g.refs, g.size = g.refs[:mark], size
		if be := (*boundError)(nil); errors.As(err, &be) {
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	return nil, prefix(path, first)
}

// size estimates the JSON size of a value taken from the schema.
func size(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// join appends a property name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// prefix names the property an error is about, once.
func prefix(path string, err error) error {
	if err == nil || path == "" || strings.HasPrefix(err.Error(), "property ") {
		return err
	}
	if be := (*boundError)(nil); errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("property %s: %w", path, err)
}
