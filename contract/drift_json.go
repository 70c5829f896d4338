package contract

import (
	"bytes"
	"encoding/json"
	"math/big"
)

// --- JSON values ------------------------------------------------------------

// decodeJSON decodes raw with numbers kept as json.Number; ok is false for
// empty or malformed input.
func decodeJSON(raw json.RawMessage) (v any, ok bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// decodeObject decodes a raw JSON object; anything else is an empty one.
func decodeObject(raw json.RawMessage) map[string]any {
	v, _ := decodeJSON(raw)
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// decodeSchema decodes an input schema. An absent or malformed schema is
// the empty schema, which accepts anything; a boolean schema stays a bool.
func decodeSchema(raw json.RawMessage) any {
	v, ok := decodeJSON(raw)
	if !ok || v == nil {
		return map[string]any{}
	}
	return v
}

// number parses a JSON number; ok is false for anything else.
func number(v any) (*big.Float, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	return f, true
}

// jsonEqual reports whether two decoded JSON values are the same value:
// numbers compare numerically, objects regardless of key order.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		fx, okx := number(x)
		fy, oky := number(b)
		if !okx || !oky {
			return false
		}
		return fx.Cmp(fy) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	default:
		// string, bool, nil
		return a == b
	}
}

// valueText is a keyword's value as Before or After text: canonical JSON,
// or "absent".
func valueText(v any, present bool) string {
	if !present {
		return "absent"
	}
	b, err := Canonical(v)
	if err != nil {
		return "?"
	}
	return clip(string(b))
}
