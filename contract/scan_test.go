package contract

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The scanners agree with encoding/json on what they find, and hand on
// the values as sent.
func TestEachMemberAndElement(t *testing.T) {
	for _, raw := range []string{
		`{}`, ` { "a" : 1 , "b":"x,}\"]" ,"c":[1,{"d":[]}], "e\u00e9":null, "f":true, "g": {"h": "}"} } `,
		`{"tools":[{"name":"a","description":"[{\"}"},{"name":"b"}],"nextCursor":"c2"}`,
	} {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		if err := EachMember(json.RawMessage(raw), func(k string, v json.RawMessage) { got[k] = v }); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: members %q, want %q", raw, got, want)
		}
		for k, v := range want {
			if v[0] != '[' {
				continue
			}
			var wantEl []json.RawMessage
			_ = json.Unmarshal(v, &wantEl)
			var gotEl []json.RawMessage
			if err := EachElement(v, func(e json.RawMessage) { gotEl = append(gotEl, e) }); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			if !reflect.DeepEqual(gotEl, wantEl) && !(len(gotEl) == 0 && len(wantEl) == 0) {
				t.Errorf("%s: elements %q, want %q", k, gotEl, wantEl)
			}
		}
	}
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":1`, `{"a":"x}`, `{"a":[1}`} {
		if err := EachMember(json.RawMessage(bad), func(string, json.RawMessage) {}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
