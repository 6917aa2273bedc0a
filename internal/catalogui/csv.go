package catalogui

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/fbc"
)

type installMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type apiView struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	Group       string `json:"group"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

type apis struct {
	Owned    []apiView `json:"owned"`
	Required []apiView `json:"required"`
}

// csvFields is what the UI reads of a CSV's spec, or of olm.csv.metadata
// (the same fields at the top, with the CSV's annotations beside them).
type csvFields struct {
	DisplayName     string                `json:"displayName"`
	Description     string                `json:"description"`
	Provider        struct{ Name string } `json:"provider"`
	Keywords        []string              `json:"keywords"`
	InstallModes    []installMode         `json:"installModes"`
	CRDs            apis                  `json:"customresourcedefinitions"`
	CRDDescriptions apis                  `json:"crdDescriptions"`
	// apiservicedefinitions in a CSV, apiServiceDefinitions in
	// olm.csv.metadata: encoding/json matches either.
	APIServices apis           `json:"apiservicedefinitions"`
	Annotations map[string]any `json:"annotations"`
}

// csvInfo is a bundle's CSV as the pages show it.
type csvInfo struct {
	DisplayName, Description, Provider string
	// Short is metadata.annotations.description, else the first
	// sentence of Description: what a card says.
	Short        string
	Capability   string
	Categories   []string
	Keywords     []string
	InstallModes []installMode
	Owned        []apiView
	Required     []apiView
	// From says where it was read: olm.bundle.object or olm.csv.metadata.
	From string
}

// readCSV reads b's CSV from its olm.bundle.object properties, else from
// olm.csv.metadata; nil when the catalog holds neither.
func readCSV(b *fbc.Bundle) *csvInfo {
	var meta *csvInfo
	for _, p := range b.Properties {
		switch p.Type {
		case fbc.PropertyBundleObject:
			o, err := fbc.DecodeBundleObject(p.Value)
			if err != nil || len(o.Data) == 0 {
				continue
			}
			var m struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Annotations map[string]any `json:"annotations"`
				} `json:"metadata"`
				Spec csvFields `json:"spec"`
			}
			j, err := yaml.YAMLToJSON(o.Data)
			if err != nil || json.Unmarshal(j, &m) != nil || m.Kind != "ClusterServiceVersion" {
				continue
			}
			m.Spec.Annotations = m.Metadata.Annotations
			return newCSVInfo(&m.Spec, m.Spec.CRDs, "the bundle's ClusterServiceVersion (olm.bundle.object)")
		case fbc.PropertyCSVMetadata:
			var m csvFields
			if meta == nil && json.Unmarshal(p.Value, &m) == nil {
				meta = newCSVInfo(&m, m.CRDDescriptions, "olm.csv.metadata")
			}
		}
	}
	return meta
}

func newCSVInfo(f *csvFields, crds apis, from string) *csvInfo {
	c := &csvInfo{
		DisplayName: strings.TrimSpace(f.DisplayName), Description: f.Description, Provider: strings.TrimSpace(f.Provider.Name),
		Keywords: f.Keywords, InstallModes: f.InstallModes, From: from,
		Owned:    append(append([]apiView(nil), crds.Owned...), f.APIServices.Owned...),
		Required: append(append([]apiView(nil), crds.Required...), f.APIServices.Required...),
	}
	ann := func(k string) string {
		s, _ := f.Annotations[k].(string)
		return strings.TrimSpace(s)
	}
	c.Short = clip(oneLine(ann("description")), 240)
	if c.Short == "" {
		c.Short = firstSentence(f.Description)
	}
	c.Capability = ann("capabilities")
	for _, cat := range strings.Split(ann("categories"), ",") {
		if cat = strings.TrimSpace(cat); cat != "" {
			c.Categories = append(c.Categories, cat)
		}
	}
	sort.Strings(c.Categories)
	return c
}

// supports says whether the CSV supports an install mode.
func (c *csvInfo) supports(mode string) bool {
	for _, m := range c.InstallModes {
		if m.Type == mode && m.Supported {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

var (
	mdImageRE  = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	mdLinkRE   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdMarkRE   = regexp.MustCompile("[*_`]+")
	mdListRE   = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s+`)
	sentenceRE = regexp.MustCompile(`[.!?](\s|$)`)
)

// firstSentence is the first sentence of a Markdown description, as plain
// text: headings, images and markup left out, links as their text.
func firstSentence(d string) string {
	for _, para := range strings.Split(strings.ReplaceAll(d, "\r\n", "\n"), "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" || strings.HasPrefix(para, "#") || strings.HasPrefix(para, "```") || strings.HasPrefix(para, "|") || strings.HasPrefix(para, "<") {
			// Headings, code, tables and raw HTML say little on a card.
			continue
		}
		lines := strings.Split(para, "\n")
		for i, l := range lines {
			lines[i] = mdListRE.ReplaceAllString(l, "")
		}
		t := mdLinkRE.ReplaceAllString(mdImageRE.ReplaceAllString(strings.Join(lines, " "), ""), "$1")
		t = oneLine(mdMarkRE.ReplaceAllString(t, ""))
		if t == "" {
			continue
		}
		if loc := sentenceRE.FindStringIndex(t); loc != nil {
			t = t[:loc[0]+1]
		}
		return clip(t, 240)
	}
	return ""
}

// summary is a package description's first paragraph, as plain text,
// clipped (olm.package's description, for a package whose head has no CSV
// description).
func summary(d string) string {
	for _, para := range strings.Split(strings.ReplaceAll(d, "\r\n", "\n"), "\n\n") {
		t := strings.TrimSpace(strings.Trim(strings.TrimSpace(para), "#"))
		if t == "" {
			continue
		}
		return clip(oneLine(t), 240)
	}
	return ""
}
