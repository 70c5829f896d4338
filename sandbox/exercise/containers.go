package exercise

import (
	"encoding/json"
	"fmt"
)

// object generates the required properties of s, and optional ones in
// declared order until minProperties is met.
func (g *generator) object(s *object, path string, depth, variant int) (any, error) {
	props, _ := s.vals["properties"].(*object)
	var names []string
	seen := map[string]bool{}
	for _, r := range strs(s.vals["required"]) {
		if !seen[r] {
			seen[r] = true
			names = append(names, r)
		}
	}
	if minProps, ok := count(s, "minProperties"); ok && minProps > len(names) {
		for _, k := range props.keysOrNil() {
			if len(names) >= minProps {
				break
			}
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
		if len(names) < minProps {
			return nil, prefix(path, fmt.Errorf("minProperties %d is more than the properties declared", minProps))
		}
	}
	if err := g.add(2); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, n := range names {
		var sub any = true
		if v, ok := props.get(n); ok {
			sub = v
		} else if ap, ok := s.vals["additionalProperties"]; ok {
			sub = ap
		}
		if err := g.add(len(n) + 4); err != nil {
			return nil, err
		}
		v, err := g.gen(sub, join(path, n), n, depth+1, variant)
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

func (o *object) keysOrNil() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// array generates minItems items (none without minItems), distinct ones
// when uniqueItems asks for it.
func (g *generator) array(s *object, path, name string, depth, variant int) (any, error) {
	n, _ := count(s, "minItems")
	if n > maxMinItems {
		return nil, prefix(path, fmt.Errorf("minItems %d is past the bound", n))
	}
	if hi, ok := count(s, "maxItems"); ok && hi < n {
		return nil, prefix(path, fmt.Errorf("minItems %d is more than maxItems %d", n, hi))
	}
	unique, _ := s.vals["uniqueItems"].(bool)
	if err := g.add(2); err != nil {
		return nil, err
	}
	out := make([]any, 0, n)
	seen := map[string]bool{}
	for i := range n {
		item := itemSchema(s, i)
		var v any
		var err error
		for try := 0; ; try++ {
			vr := variant
			if unique && n > 1 {
				vr = variant + i + try*n
			}
			if v, err = g.gen(item, path+"[]", name, depth+1, vr); err != nil {
				return nil, err
			}
			key, _ := json.Marshal(v)
			if !unique || !seen[string(key)] {
				seen[string(key)] = true
				break
			}
			if try == 4 {
				return nil, prefix(path, fmt.Errorf("%d distinct items cannot be generated", n))
			}
		}
		if err := g.add(1); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// itemSchema returns the schema of item i: prefixItems (2020-12) or an
// items list (draft 4 to 2019-09) first, then items or additionalItems.
func itemSchema(s *object, i int) any {
	if pre, ok := s.vals["prefixItems"].([]any); ok {
		if i < len(pre) {
			return pre[i]
		}
		if it, ok := s.get("items"); ok {
			return it
		}
		return true
	}
	if list, ok := s.vals["items"].([]any); ok {
		if i < len(list) {
			return list[i]
		}
		if ai, ok := s.get("additionalItems"); ok {
			return ai
		}
		return true
	}
	if it, ok := s.get("items"); ok {
		return it
	}
	return true
}
