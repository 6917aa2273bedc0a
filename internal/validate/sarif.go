package validate

import (
	"encoding/json"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 rendering of a validation Result, for GitHub code scanning and
// other SARIF readers (`-o sarif`). One run, one result per finding; the
// rules of the run's driver are the whole catalog, so that every ruleId is
// described.

// SARIFVersion is the SARIF version WriteSARIF writes.
const SARIFVersion = "2.1.0"

// sarifSchemaURI is the OASIS schema of SARIFVersion, named in $schema.
const sarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// SARIFOptions describe the tool and how file locations are written.
type SARIFOptions struct {
	// ToolName is tool.driver.name ("opm" when empty).
	ToolName string
	// Version is the tool's version (tool.driver.version); left out when empty.
	Version string
	// InformationURI is the tool's home page; left out when empty.
	InformationURI string
	// RulesDocURI, when set, is the page of the rule catalog
	// (docs/validation.md): each rule's helpUri is it plus "#<rule id>".
	RulesDocURI string
	// BaseDir makes absolute bundle paths relative to it (normally the
	// repository root or the working directory), as code scanning needs
	// URIs relative to the repository. A path that stays absolute is
	// written as a file:// URI.
	BaseDir string
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	ShortDescription     sarifText          `json:"shortDescription"`
	FullDescription      sarifText          `json:"fullDescription"`
	Help                 sarifHelp          `json:"help"`
	HelpURI              string             `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           sarifProperties    `json:"properties"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifProperties struct {
	Tags []string `json:"tags,omitempty"`
	// Bundle and Field say, on a result, which bundle argument and which
	// field path the finding is about.
	Bundle string `json:"bundle,omitempty"`
	Field  string `json:"field,omitempty"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties sarifProperties `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// sarifLevel maps a severity to SARIF's level (info is "note").
func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes r as a SARIF 2.1.0 log, indented, with a trailing
// newline.
func WriteSARIF(w io.Writer, r *Result, opts SARIFOptions) error {
	name := opts.ToolName
	if name == "" {
		name = "opm"
	}
	rules := Rules()
	index := make(map[string]int, len(rules))
	driver := sarifDriver{Name: name, Version: opts.Version, InformationURI: opts.InformationURI, Rules: make([]sarifRule, 0, len(rules))}
	for i, rule := range rules {
		index[rule.ID] = i
		sr := sarifRule{
			ID:               rule.ID,
			ShortDescription: sarifText{Text: rule.What},
			FullDescription:  sarifText{Text: strings.TrimSpace(rule.What + " " + rule.Why)},
			Help: sarifHelp{
				Text:     "Checks: " + rule.What + "\n\nWhy: " + rule.Why + "\n\nFix: " + rule.Fix,
				Markdown: "**Checks:** " + rule.What + "\n\n**Why:** " + rule.Why + "\n\n**Fix:** " + rule.Fix,
			},
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(rule.Severity)},
			Properties:           sarifProperties{Tags: []string{"opm", rule.Scope.String()}},
		}
		if opts.RulesDocURI != "" {
			sr.HelpURI = opts.RulesDocURI + "#" + rule.ID
		}
		driver.Rules = append(driver.Rules, sr)
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	for _, rep := range r.Bundles {
		for _, f := range rep.Findings {
			i, ok := index[f.Rule]
			if !ok {
				continue // every finding comes from a registered rule
			}
			res := sarifResult{
				RuleID: f.Rule, RuleIndex: i, Level: sarifLevel(f.Severity),
				Message:    sarifText{Text: sarifMessage(f)},
				Properties: sarifProperties{Bundle: rep.Path, Field: f.Field},
			}
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(rep.Path, f.File, opts.BaseDir)}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
			}
			res.Locations = []sarifLocation{loc}
			run.Results = append(run.Results, res)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchemaURI, Version: SARIFVersion, Runs: []sarifRun{run}})
}

// sarifMessage is the finding's message, naming the field when the message
// does not, then the hint.
func sarifMessage(f Finding) string {
	msg := f.Message
	if f.Field != "" && !strings.Contains(msg, f.Field) {
		msg = f.Field + ": " + msg
	}
	if f.Hint != "" {
		msg += "\nFix: " + f.Hint
	}
	return msg
}

// artifactURI is where a finding is, as a URI reference: the file inside
// the bundle directory given (or the CSV file given to csv lint), relative
// to baseDir when the bundle path is absolute.
func artifactURI(bundlePath, file, baseDir string) string {
	p := filepath.ToSlash(bundlePath)
	switch {
	case file == "":
	case file == bundlePath || filepath.ToSlash(file) == p:
		// csv lint: the finding names the file given.
	default:
		p = path.Join(p, filepath.ToSlash(file))
		if strings.HasSuffix(file, "/") {
			p += "/"
		}
	}
	if filepath.IsAbs(filepath.FromSlash(p)) && baseDir != "" {
		if rel, err := filepath.Rel(baseDir, filepath.FromSlash(p)); err == nil && !strings.HasPrefix(rel, "..") {
			p = filepath.ToSlash(rel)
		}
	}
	if p == "" {
		p = "."
	}
	if strings.HasPrefix(p, "/") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	p = strings.TrimPrefix(p, "./")
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	out := strings.Join(segs, "/")
	// A colon in the first segment (an image reference such as
	// localhost:5000/x) would read as a URI scheme.
	if first, _, _ := strings.Cut(out, "/"); strings.Contains(first, ":") {
		out = strings.Replace(out, ":", "%3A", strings.Count(first, ":"))
	}
	return out
}
