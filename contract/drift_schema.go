package contract

import (
	"strconv"
	"strings"
)

// --- input schemas ----------------------------------------------------------

// escapePointer escapes a property name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaObject returns a schema as an object; the boolean schema true and
// anything that is not an object are the empty schema, false is reported
// by ok false.
func schemaObject(v any) (m map[string]any, ok bool) {
	switch s := v.(type) {
	case map[string]any:
		return s, true
	case bool:
		return map[string]any{}, s
	default:
		return map[string]any{}, true
	}
}

func properties(s map[string]any) map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

// pairs pairs the subschemas of two schemas that drift descends into:
// the properties named on both sides and the items (a list schema, or a
// tuple position present on both sides).
func pairs(ptr string, b, a map[string]any) [][3]any {
	var out [][3]any
	bp := properties(b)
	for name, av := range properties(a) {
		if bv, ok := bp[name]; ok {
			out = append(out, [3]any{ptr + "/properties/" + escapePointer(name), bv, av})
		}
	}
	bv, bok := b["items"]
	av, aok := a["items"]
	if !bok || !aok {
		return out
	}
	bl, bIsList := bv.([]any)
	al, aIsList := av.([]any)
	switch {
	case bIsList && aIsList:
		for i := 0; i < len(al) && i < len(bl); i++ {
			out = append(out, [3]any{ptr + "/items/" + strconv.Itoa(i), bl[i], al[i]})
		}
	case !bIsList && !aIsList:
		out = append(out, [3]any{ptr + "/items", bv, av})
	}
	// A tuple that became a list schema, or the reverse: no pairing.
	return out
}

// addedParameters returns the JSON pointers of the properties declared in
// the after schema and not in the before, at any depth of properties and
// items; a new property's own properties are not listed.
func addedParameters(ptr string, before, after any) []string {
	a, ok := after.(map[string]any)
	if !ok {
		return nil
	}
	b, _ := before.(map[string]any)
	if undeclared(b) {
		// A baseline that said nothing of its shape (no type, no
		// properties: the empty schema some releases published by
		// mistake) enumerated no parameters, so none is new against it.
		return nil
	}
	var out []string
	bp := properties(b)
	for name, av := range properties(a) {
		p := ptr + "/properties/" + escapePointer(name)
		bv, ok := bp[name]
		if !ok {
			out = append(out, p)
			continue
		}
		out = append(out, addedParameters(p, bv, av)...)
	}
	bi, bok := b["items"]
	switch ai := a["items"].(type) {
	case []any:
		bl, bIsList := bi.([]any)
		if bok && !bIsList {
			break
		}
		for i, av := range ai {
			var bv any
			if i < len(bl) {
				bv = bl[i]
			}
			out = append(out, addedParameters(ptr+"/items/"+strconv.Itoa(i), bv, av)...)
		}
	case map[string]any:
		if _, bIsList := bi.([]any); bIsList {
			break
		}
		out = append(out, addedParameters(ptr+"/items", bi, ai)...)
	}
	return out
}

// undeclared reports whether a schema says nothing of its shape: no
// type and no properties (annotations such as $schema aside).
func undeclared(s map[string]any) bool {
	_, typed := s["type"]
	_, props := s["properties"]
	return !typed && !props
}

// loosening is one schema keyword that accepts more after than before.
type loosening struct {
	detail, before, after string
}

// lowerBounds and upperBounds are the numeric bounds: a lower bound
// loosens when it drops, an upper bound when it rises.
var (
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}
)

// loosenings compares two schemas keyword by keyword, at the root and
// recursively over the properties present on both sides and the items.
func loosenings(ptr string, before, after any) []loosening {
	a, aok := schemaObject(after)
	b, bok := schemaObject(before)
	if !aok || !bok {
		// After accepts nothing (tighter than anything), or before
		// accepted nothing: no keyword to name.
		return nil
	}
	var out []loosening
	add := func(kw string, bv any, bp bool, av any, ap bool) {
		out = append(out, loosening{strings.TrimSpace(ptr + " " + kw), valueText(bv, bp), valueText(av, ap)})
	}
	get := func(m map[string]any, kw string) (any, bool) {
		v, ok := m[kw]
		return v, ok
	}

	if bv, bp := get(b, "type"); bp {
		av, ap := get(a, "type")
		bt, bvalid := typeSet(bv)
		at, avalid := typeSet(av)
		if !ap || (bvalid && avalid && widens(bt, at)) {
			add("type", bv, bp, av, ap)
		}
	}
	if bv, bp := get(b, "enum"); bp {
		av, ap := get(a, "enum")
		be, bvalid := bv.([]any)
		ae, avalid := av.([]any)
		if !ap || (bvalid && avalid && !subset(ae, be)) {
			add("enum", bv, bp, av, ap)
		}
	}
	if bv, bp := get(b, "const"); bp {
		if av, ap := get(a, "const"); !ap || !jsonEqual(bv, av) {
			add("const", bv, bp, av, ap)
		}
	}
	for _, kw := range []string{"pattern", "format"} {
		if bv, bp := get(b, kw); bp {
			if av, ap := get(a, kw); !ap {
				add(kw, bv, bp, av, ap)
			}
		}
	}
	for _, kw := range lowerBounds {
		if bv, bp := get(b, kw); bp {
			if av, ap := get(a, kw); !ap || relaxed(bv, av, -1) {
				add(kw, bv, bp, av, ap)
			}
		}
	}
	for _, kw := range upperBounds {
		if bv, bp := get(b, kw); bp {
			if av, ap := get(a, kw); !ap || relaxed(bv, av, 1) {
				add(kw, bv, bp, av, ap)
			}
		}
	}
	if bv, bp := get(b, "additionalProperties"); bp && bv == false {
		if av, ap := get(a, "additionalProperties"); av != false {
			add("additionalProperties", bv, bp, av, ap)
		}
	}
	if bv, bp := get(b, "required"); bp {
		av, ap := get(a, "required")
		if leftRequired(b, a, bv, av) {
			add("required", bv, bp, av, ap)
		}
	}

	for _, c := range pairs(ptr, b, a) {
		out = append(out, loosenings(c[0].(string), c[1], c[2])...)
	}
	return out
}

// typeSet reads a type keyword (a name or a list of names).
func typeSet(v any) (map[string]bool, bool) {
	set := map[string]bool{}
	switch t := v.(type) {
	case string:
		set[t] = true
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			set[s] = true
		}
	default:
		return nil, false
	}
	return set, true
}

// widens reports whether the after types admit a type the before did
// not; "number" admits "integer".
func widens(before, after map[string]bool) bool {
	for t := range after {
		if before[t] || (t == "integer" && before["number"]) {
			continue
		}
		return true
	}
	return false
}

// subset reports whether every value of xs is one of ys.
func subset(xs, ys []any) bool {
	for _, x := range xs {
		found := false
		for _, y := range ys {
			if jsonEqual(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// relaxed reports whether a bound moved the loosening way: down for a
// lower bound (dir -1), up for an upper one (dir 1). A draft-04 boolean
// exclusiveMinimum/exclusiveMaximum loosens when it goes from true to
// false. Values that are not comparable make no claim.
func relaxed(before, after any, dir int) bool {
	if bb, ok := before.(bool); ok {
		ab, ok := after.(bool)
		return ok && bb && !ab
	}
	bn, bok := number(before)
	an, aok := number(after)
	if !bok || !aok {
		return false
	}
	return an.Cmp(bn) == dir
}

// leftRequired reports whether a name required before is not required
// after, leaving out names whose property was removed (a removed
// property is a tightening, not a loosening).
func leftRequired(b, a map[string]any, bv, av any) bool {
	breq, ok := bv.([]any)
	if !ok {
		return false
	}
	areq, _ := av.([]any)
	bp, ap := properties(b), properties(a)
	for _, n := range breq {
		name, ok := n.(string)
		if !ok {
			continue
		}
		if _, was := bp[name]; was {
			if _, is := ap[name]; !is {
				continue
			}
		}
		still := false
		for _, m := range areq {
			if m == name {
				still = true
				break
			}
		}
		if !still {
			return true
		}
	}
	return false
}

// descriptionChanges returns the descriptions that differ between two
// schemas, at subschemas present on both sides, with the pointer of each
// description keyword.
func descriptionChanges(ptr string, before, after any) []loosening {
	a, aok := after.(map[string]any)
	b, bok := before.(map[string]any)
	if !aok || !bok {
		return nil
	}
	var out []loosening
	bd, _ := b["description"].(string)
	ad, _ := a["description"].(string)
	if bd != ad {
		out = append(out, loosening{ptr + "/description", clip(bd), clip(ad)})
	}
	// Schemas keyed by name.
	for _, kw := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		bm, _ := b[kw].(map[string]any)
		am, _ := a[kw].(map[string]any)
		for name, av := range am {
			if bv, ok := bm[name]; ok {
				out = append(out, descriptionChanges(ptr+"/"+kw+"/"+escapePointer(name), bv, av)...)
			}
		}
	}
	// Schemas and lists of schemas.
	for _, kw := range []string{"items", "prefixItems", "anyOf", "oneOf", "allOf", "additionalProperties",
		"additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		bv, av := b[kw], a[kw]
		bl, bIsList := bv.([]any)
		al, aIsList := av.([]any)
		switch {
		case bIsList && aIsList:
			for i := 0; i < len(al) && i < len(bl); i++ {
				out = append(out, descriptionChanges(ptr+"/"+kw+"/"+strconv.Itoa(i), bl[i], al[i])...)
			}
		case !bIsList && !aIsList:
			out = append(out, descriptionChanges(ptr+"/"+kw, bv, av)...)
		}
	}
	return out
}
