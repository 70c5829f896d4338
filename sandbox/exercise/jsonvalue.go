package exercise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxNesting bounds the nesting of a decoded JSON document; encoding/json
// itself stops at 10000, far past any schema or mail request.
const maxNesting = 1000

var errNesting = fmt.Errorf("JSON is nested past depth %d", maxNesting)

// object is a decoded JSON object that keeps its keys in the order they were
// written, so that "declared order" and "order of appearance" mean something.
// A repeated key keeps its first position and its last value.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

// get returns the value of key k.
func (o *object) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

// set sets key k, appending it to the order when it is new.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// MarshalJSON writes the object with its keys in their order.
func (o *object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// decode decodes one JSON document into nil, bool, json.Number, string,
// []any and *object values. On an error it also returns what was decoded
// before it, so that a body cut at a bound is still read up to the cut.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return v, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxNesting {
		return nil, errNesting
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := newObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return o, err
			}
			k, _ := kt.(string)
			v, err := decodeValue(dec, depth+1)
			if err == nil || v != nil {
				o.set(k, v)
			}
			if err != nil {
				return o, err
			}
		}
		_, err := dec.Token()
		return o, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err == nil || v != nil {
				arr = append(arr, v)
			}
			if err != nil {
				return arr, err
			}
		}
		_, err := dec.Token()
		return arr, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}
