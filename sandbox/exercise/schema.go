package exercise

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
)

// asObject returns a schema node as an object schema: true and anything that
// is not an object are the empty schema, false is an error.
func asObject(node any) (*object, error) {
	switch n := node.(type) {
	case *object:
		return n, nil
	case bool:
		if !n {
			return nil, fmt.Errorf("schema false accepts no value")
		}
	}
	return newObject(), nil
}

// without returns a copy of s without the given keys.
func without(s *object, keys ...string) *object {
	out := newObject()
	for _, k := range s.keys {
		if !slices.Contains(keys, k) {
			out.set(k, s.vals[k])
		}
	}
	return out
}

// lookup resolves a local reference ("#", "#/$defs/x", "#/definitions/x" or
// any other JSON pointer into the root document).
func lookup(root any, ref string) (any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("reference %q is not local", ref)
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	node := root
	if frag == "" {
		return node, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("reference %q is not a JSON pointer", ref)
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case *object:
			v, ok := n.get(tok)
			if !ok {
				return nil, fmt.Errorf("reference %q names nothing", ref)
			}
			node = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(n) {
				return nil, fmt.Errorf("reference %q names nothing", ref)
			}
			node = n[i]
		default:
			return nil, fmt.Errorf("reference %q names nothing", ref)
		}
	}
	return node, nil
}

// merge returns the conjunction of two object schemas, shallowly: properties
// and required are united, types intersected, lower bounds take the larger
// and upper bounds the smaller value, and any other keyword keeps a's value.
func merge(a, b *object) (*object, error) {
	out := newObject()
	for _, k := range a.keys {
		out.set(k, a.vals[k])
	}
	for _, k := range b.keys {
		bv := b.vals[k]
		av, ok := out.get(k)
		if !ok {
			out.set(k, bv)
			continue
		}
		switch k {
		case "properties":
			ap, aok := av.(*object)
			bp, bok := bv.(*object)
			if aok && bok {
				m := newObject()
				for _, pk := range ap.keys {
					m.set(pk, ap.vals[pk])
				}
				for _, pk := range bp.keys {
					if _, dup := m.get(pk); !dup {
						m.set(pk, bp.vals[pk])
					}
				}
				out.set(k, m)
			}
		case "required":
			req := strs(av)
			for _, r := range strs(bv) {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			out.set(k, toAny(req))
		case "type":
			ta, tb := types(a), types(b)
			var both []string
			for _, t := range ta {
				if slices.Contains(tb, t) || (t == "integer" && slices.Contains(tb, "number")) {
					both = append(both, t)
				} else if t == "number" && slices.Contains(tb, "integer") {
					both = append(both, "integer")
				}
			}
			if len(both) == 0 {
				return nil, fmt.Errorf("allOf branches disagree on the type (%s and %s)", strings.Join(ta, "|"), strings.Join(tb, "|"))
			}
			out.set(k, toAny(both))
		case "minimum", "minLength", "minItems", "minProperties":
			if x, ok := num(bv); ok {
				if y, ok := num(av); !ok || x > y {
					out.set(k, bv)
				}
			}
		case "maximum", "maxLength", "maxItems", "maxProperties":
			if x, ok := num(bv); ok {
				if y, ok := num(av); !ok || x < y {
					out.set(k, bv)
				}
			}
		}
	}
	return out, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// strs returns the strings of a JSON array (others are skipped).
func strs(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// num returns a JSON number as a float64.
func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// count returns a non-negative integer keyword (minItems, maxLength...),
// capped far above any bound so that huge values compare as huge.
func count(s *object, key string) (int, bool) {
	f, ok := num(s.vals[key])
	if !ok || f < 0 {
		return 0, false
	}
	if f > 1<<40 {
		f = 1 << 40
	}
	return int(f), true
}

// types returns the declared types of s, as written ("type" string or list).
func types(s *object) []string {
	switch t := s.vals["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return strs(t)
	}
	return nil
}

// kind returns the type to generate for s: the first declared type that is
// not null, or, with no type, the type its keywords imply.
func kind(s *object) string {
	ts := types(s)
	for _, t := range ts {
		if t != "null" {
			return t
		}
	}
	if len(ts) > 0 {
		return "null"
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := s.vals[k]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties", "minProperties", "patternProperties"):
		return "object"
	case has("items", "prefixItems", "minItems", "maxItems", "uniqueItems"):
		return "array"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return "string"
}

// allows reports whether value v has one of the declared types of s (any
// value when s declares none).
func allows(s *object, v any) bool {
	ts := types(s)
	if len(ts) == 0 {
		return true
	}
	for _, t := range ts {
		switch x := v.(type) {
		case string:
			if t == "string" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case nil:
			if t == "null" {
				return true
			}
		case *object:
			if t == "object" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case json.Number:
			f, ok := num(x)
			if t == "number" || (t == "integer" && ok && f == math.Trunc(f)) {
				return true
			}
		}
	}
	return false
}
