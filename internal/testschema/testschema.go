// Package testschema is the tests' one way to check a document against a
// JSON Schema (santhosh-tekuri/jsonschema): the report's and the config
// report's tests share it.
package testschema

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles the schema data, named name.
func Compile(t testing.TB, name string, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return sch
}

// Validate checks the JSON document data against sch.
func Validate(t testing.TB, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	return sch.Validate(inst)
}
