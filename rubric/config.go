package rubric

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ConfigCatalogVersion is the config findings catalog in force.
const ConfigCatalogVersion = "1"

//go:embed config/*.yaml
var configFiles embed.FS

// ConfigCatalogFile is one parsed, validated catalog of client config
// findings (cfg. codes): what a client configuration file alone proves.
// Such a finding is one-sided: real when present, its absence proving
// nothing. Config findings are their own claims: they carry no weight,
// are never pooled with a package's score, and a configuration gets no
// score. (The type is not named ConfigCatalog because that is the name of
// the function returning the catalog in force.)
type ConfigCatalogFile struct {
	Version     string
	Hash        string // "sha256:" and the hex SHA-256 of the file bytes
	Description string
	Codes       []ConfigCode // sorted by code

	byCode map[string]ConfigCode
}

// ConfigCode is one entry of the config findings catalog.
type ConfigCode struct {
	Code        string   `yaml:"code" json:"code"`
	Severity    Severity `yaml:"severity" json:"severity"`
	Description string   `yaml:"description" json:"description"`
	Remediation string   `yaml:"remediation" json:"remediation"`
}

// configFile is the YAML layout of a config catalog file.
type configFile struct {
	Version     string       `yaml:"version"`
	Description string       `yaml:"description"`
	Codes       []ConfigCode `yaml:"codes"`
}

// ConfigCatalogVersions lists the embedded config catalog versions in
// ascending order.
func ConfigCatalogVersions() []string {
	entries, err := configFiles.ReadDir("config")
	if err != nil {
		// The directory is embedded; failing to read it is a build defect.
		panic(fmt.Sprintf("rubric: read embedded config catalogs: %v", err))
	}
	var vs []string
	for _, e := range entries {
		name := e.Name()
		if v, ok := strings.CutPrefix(strings.TrimSuffix(name, ".yaml"), "v"); ok && strings.HasSuffix(name, ".yaml") {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, compareVersions)
	return vs
}

// LoadConfigCatalog parses and validates the embedded config catalog of
// the given version ("1"; a leading "v" is accepted). Each call returns a
// new catalog.
func LoadConfigCatalog(version string) (*ConfigCatalogFile, error) {
	v := strings.TrimPrefix(version, "v")
	data, err := configFiles.ReadFile("config/v" + v + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("%w: config catalog %q (have %s)", ErrUnknownVersion, version, strings.Join(ConfigCatalogVersions(), ", "))
	}
	c, err := ParseConfigCatalog(data)
	if err != nil {
		return nil, fmt.Errorf("config catalog v%s: %w", v, err)
	}
	if c.Version != v {
		return nil, fmt.Errorf("config catalog v%s: file declares version %q", v, c.Version)
	}
	return c, nil
}

var currentConfig = sync.OnceValue(func() *ConfigCatalogFile {
	c, err := LoadConfigCatalog(ConfigCatalogVersion)
	if err != nil {
		// The embedded catalog is validated by the tests; a failure here is
		// a build defect, not a runtime condition.
		panic(err)
	}
	return c
})

// ConfigCatalog returns the config findings catalog in force. The value is
// shared and must not be modified.
func ConfigCatalog() *ConfigCatalogFile { return currentConfig() }

// Code returns the catalog entry of code.
func (c *ConfigCatalogFile) Code(code string) (ConfigCode, bool) {
	if c.byCode != nil {
		d, ok := c.byCode[code]
		return d, ok
	}
	for _, d := range c.Codes {
		if d.Code == code {
			return d, true
		}
	}
	return ConfigCode{}, false
}

var configCodePattern = regexp.MustCompile(`^cfg\.[a-z0-9_]+(\.[a-z0-9_]+)+$`)

// ParseConfigCatalog decodes and validates a config catalog file. Unknown
// fields are errors, so a misspelt key cannot silently drop a remediation.
func ParseConfigCatalog(data []byte) (*ConfigCatalogFile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f configFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty config catalog file")
		}
		return nil, fmt.Errorf("decode: %w", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode: more than one YAML document")
	}
	sum := sha256.Sum256(data)
	c := &ConfigCatalogFile{
		Version:     f.Version,
		Hash:        "sha256:" + hex.EncodeToString(sum[:]),
		Description: strings.TrimSpace(f.Description),
		Codes:       make([]ConfigCode, 0, len(f.Codes)),
		byCode:      make(map[string]ConfigCode, len(f.Codes)),
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Version == "" {
		add("version: missing")
	}
	if c.Description == "" {
		add("description: missing")
	}
	if len(f.Codes) == 0 {
		add("codes: none")
	}
	for i, d := range f.Codes {
		where := fmt.Sprintf("codes[%d] %q", i, d.Code)
		d.Description, d.Remediation = strings.TrimSpace(d.Description), strings.TrimSpace(d.Remediation)
		if !configCodePattern.MatchString(d.Code) {
			add("%s: code does not match %s", where, configCodePattern)
		}
		if _, dup := c.byCode[d.Code]; dup {
			add("%s: duplicate code", where)
			continue
		}
		if !slices.Contains(Severities(), d.Severity) {
			add("%s: unknown severity %q", where, d.Severity)
		}
		if d.Description == "" {
			add("%s: description missing", where)
		}
		if d.Remediation == "" {
			add("%s: remediation missing", where)
		}
		c.byCode[d.Code] = d
		c.Codes = append(c.Codes, d)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.SortFunc(c.Codes, func(a, b ConfigCode) int { return strings.Compare(a.Code, b.Code) })
	return c, nil
}
