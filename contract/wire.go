package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// The Parse functions read the objects of MCP results as a server sent
// them (camelCase wire names) into the model, keeping every field: those
// the model names are typed, the others go to Extra as sent, and a field
// the server left out (or sent as null) stays absent.

// ParseImplementation reads serverInfo.
func ParseImplementation(raw json.RawMessage) (Implementation, error) {
	var w struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Version     string          `json:"version"`
		Description string          `json:"description"`
		WebsiteURL  string          `json:"websiteUrl"`
		Icons       json.RawMessage `json:"icons"`
	}
	extra, err := decodeKnown(raw, &w, "name", "title", "version", "description", "websiteUrl", "icons")
	if err != nil {
		return Implementation{}, fmt.Errorf("serverInfo: %w", err)
	}
	return Implementation{Name: w.Name, Title: w.Title, Version: w.Version, Description: w.Description,
		WebsiteURL: w.WebsiteURL, Icons: present(w.Icons), Extra: extra}, nil
}

// ParseTool reads one tool of a tools/list result.
func ParseTool(raw json.RawMessage) (Tool, error) {
	var w struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
		Icons        json.RawMessage `json:"icons"`
		Execution    json.RawMessage `json:"execution"`
		Meta         json.RawMessage `json:"_meta"`
	}
	extra, err := decodeKnown(raw, &w, "name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "execution", "_meta")
	if err != nil {
		return Tool{}, fmt.Errorf("tool: %w", err)
	}
	t := Tool{Name: w.Name, Title: w.Title, Description: w.Description,
		InputSchema: present(w.InputSchema), OutputSchema: present(w.OutputSchema),
		Icons: present(w.Icons), Execution: present(w.Execution), Meta: present(w.Meta), Extra: extra}
	if a := present(w.Annotations); a != nil {
		var aw struct {
			Title           string `json:"title"`
			ReadOnlyHint    *bool  `json:"readOnlyHint"`
			DestructiveHint *bool  `json:"destructiveHint"`
			IdempotentHint  *bool  `json:"idempotentHint"`
			OpenWorldHint   *bool  `json:"openWorldHint"`
		}
		aextra, err := decodeKnown(a, &aw, "title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
		if err != nil {
			return Tool{}, fmt.Errorf("tool %q annotations: %w", w.Name, err)
		}
		t.Annotations = &Annotations{Title: aw.Title, ReadOnlyHint: aw.ReadOnlyHint, DestructiveHint: aw.DestructiveHint,
			IdempotentHint: aw.IdempotentHint, OpenWorldHint: aw.OpenWorldHint, Extra: aextra}
	}
	return t, nil
}

// ParsePrompt reads one prompt of a prompts/list result.
func ParsePrompt(raw json.RawMessage) (Prompt, error) {
	var w struct {
		Name        string            `json:"name"`
		Title       string            `json:"title"`
		Description string            `json:"description"`
		Arguments   []json.RawMessage `json:"arguments"`
		Icons       json.RawMessage   `json:"icons"`
		Meta        json.RawMessage   `json:"_meta"`
	}
	extra, err := decodeKnown(raw, &w, "name", "title", "description", "arguments", "icons", "_meta")
	if err != nil {
		return Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	p := Prompt{Name: w.Name, Title: w.Title, Description: w.Description, Arguments: []PromptArgument{},
		Icons: present(w.Icons), Meta: present(w.Meta), Extra: extra}
	for _, ra := range w.Arguments {
		var aw struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Required    bool   `json:"required"`
		}
		aextra, err := decodeKnown(ra, &aw, "name", "title", "description", "required")
		if err != nil {
			return Prompt{}, fmt.Errorf("prompt %q argument: %w", w.Name, err)
		}
		p.Arguments = append(p.Arguments, PromptArgument{Name: aw.Name, Title: aw.Title, Description: aw.Description, Required: aw.Required, Extra: aextra})
	}
	return p, nil
}

// ParseResource reads one resource of a resources/list result.
func ParseResource(raw json.RawMessage) (Resource, error) {
	var w struct {
		URI         string          `json:"uri"`
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		MIMEType    string          `json:"mimeType"`
		Size        *int64          `json:"size"`
		Annotations json.RawMessage `json:"annotations"`
		Icons       json.RawMessage `json:"icons"`
		Meta        json.RawMessage `json:"_meta"`
	}
	extra, err := decodeKnown(raw, &w, "uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta")
	if err != nil {
		return Resource{}, fmt.Errorf("resource: %w", err)
	}
	return Resource{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description, MIMEType: w.MIMEType, Size: w.Size,
		Annotations: present(w.Annotations), Icons: present(w.Icons), Meta: present(w.Meta), Extra: extra}, nil
}

// ParseTemplate reads one template of a resources/templates/list result.
func ParseTemplate(raw json.RawMessage) (Template, error) {
	var w struct {
		URITemplate string          `json:"uriTemplate"`
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		MIMEType    string          `json:"mimeType"`
		Annotations json.RawMessage `json:"annotations"`
		Icons       json.RawMessage `json:"icons"`
		Meta        json.RawMessage `json:"_meta"`
	}
	extra, err := decodeKnown(raw, &w, "uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta")
	if err != nil {
		return Template{}, fmt.Errorf("resource template: %w", err)
	}
	return Template{URITemplate: w.URITemplate, Name: w.Name, Title: w.Title, Description: w.Description, MIMEType: w.MIMEType,
		Annotations: present(w.Annotations), Icons: present(w.Icons), Meta: present(w.Meta), Extra: extra}, nil
}

// decodeKnown decodes raw, a JSON object, into v and returns its other
// fields, or nil when it has none.
func decodeKnown(raw json.RawMessage, v any, known ...string) (Extra, error) {
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	// The unknown members only are copied: a map of every member would
	// hold a second copy of a 50 MB description.
	var all Extra
	err := EachMember(raw, func(k string, v json.RawMessage) {
		if slices.Contains(known, k) {
			return
		}
		if all == nil {
			all = Extra{}
		}
		all[k] = bytes.Clone(v)
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// present returns raw, or nil when it is absent or null.
func present(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}

// ListMethods are the list methods whose results make up a contract, in
// the order a listing asks them.
var ListMethods = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

// ListKey is the member of a list method's result that holds its items
// ("tools", "prompts", "resources", "resourceTemplates"); "" for another
// method.
func ListKey(method string) string {
	switch method {
	case "tools/list":
		return "tools"
	case "prompts/list":
		return "prompts"
	case "resources/list":
		return "resources"
	case "resources/templates/list":
		return "resourceTemplates"
	}
	return ""
}

// AddListItem parses one item of a list method's result, as the server
// sent it, and appends it to c.
func AddListItem(c *Contract, method string, raw json.RawMessage) error {
	switch method {
	case "tools/list":
		x, err := ParseTool(raw)
		c.Tools = append(c.Tools, x)
		return err
	case "prompts/list":
		x, err := ParsePrompt(raw)
		c.Prompts = append(c.Prompts, x)
		return err
	case "resources/list":
		x, err := ParseResource(raw)
		c.Resources = append(c.Resources, x)
		return err
	case "resources/templates/list":
		x, err := ParseTemplate(raw)
		c.Templates = append(c.Templates, x)
		return err
	}
	return fmt.Errorf("%s is not a list method of a contract", method)
}
