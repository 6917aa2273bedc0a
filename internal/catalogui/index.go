package catalogui

import (
	"encoding/json"
	"html/template"
	"net/url"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// card is a package as the index shows it, read from its package blob and
// the head of its default channel.
type card struct {
	Name, DisplayName, Description, Provider, Capability string
	DefaultChannel, Head, HeadVersion                    string
	Categories                                           []string
	Deprecated                                           bool
	Icon                                                 template.URL
	// text is every searched field, lower case, one per line.
	text string
}

// catalogIndex is what the index page needs of the whole catalog: read
// once, as the served catalog does not change.
type catalogIndex struct {
	cards        []card
	categories   []facet
	capabilities []facet
}

type facet struct {
	Name  string
	Count int
}

// buildIndex reads every package's card.
func (u *ui) buildIndex() (*catalogIndex, error) {
	var pkgs []fbc.Package
	err := u.blobs(fbc.SchemaPackage, "", "", func(raw []byte) error {
		var p fbc.Package
		if json.Unmarshal(raw, &p) == nil && p.Name != "" {
			pkgs = append(pkgs, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	channels := map[[2]string]*fbc.Channel{}
	err = u.blobs(fbc.SchemaChannel, "", "", func(raw []byte) error {
		var ch fbc.Channel
		if json.Unmarshal(raw, &ch) == nil {
			channels[[2]string{ch.Package, ch.Name}] = &ch
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	deprecated := map[string]bool{}
	err = u.blobs(fbc.SchemaDeprecations, "", "", func(raw []byte) error {
		var d struct {
			Package string `json:"package"`
			Entries []struct {
				Reference struct{ Schema string } `json:"reference"`
			} `json:"entries"`
		}
		if json.Unmarshal(raw, &d) != nil {
			return nil
		}
		for _, e := range d.Entries {
			if e.Reference.Schema == fbc.SchemaPackage {
				deprecated[d.Package] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ix := &catalogIndex{}
	cats, caps := map[string]int{}, map[string]int{}
	for _, p := range pkgs {
		c := card{Name: p.Name, DefaultChannel: p.DefaultChannel, Deprecated: deprecated[p.Name], Icon: icon(p.Icon)}
		var csv *csvInfo
		if ch := channels[[2]string{p.Name, p.DefaultChannel}]; ch != nil {
			b, err := u.newestHead(p.Name, ch)
			if err != nil {
				return nil, err
			}
			if b != nil {
				c.Head = b.Name
				if v, err := graph.Version(b); err == nil {
					c.HeadVersion = v.String()
				}
				csv = readCSV(b)
			}
		}
		words := []string{p.Name, p.Description}
		if csv != nil {
			c.DisplayName, c.Description, c.Provider, c.Capability, c.Categories = csv.DisplayName, csv.Short, csv.Provider, csv.Capability, csv.Categories
			words = append(words, csv.DisplayName, csv.Short, csv.Description, csv.Provider, csv.Capability)
			words = append(words, csv.Keywords...)
			words = append(words, csv.Categories...)
			for _, a := range csv.Owned {
				words = append(words, a.Kind, a.Name, a.DisplayName)
			}
		}
		if c.Description == "" {
			c.Description = summary(p.Description)
		}
		c.text = strings.ToLower(strings.Join(words, "\n"))
		for _, cat := range c.Categories {
			cats[cat]++
		}
		if c.Capability != "" {
			caps[c.Capability]++
		}
		ix.cards = append(ix.cards, c)
	}
	sort.Slice(ix.cards, func(i, j int) bool { return ix.cards[i].Name < ix.cards[j].Name })
	ix.categories, ix.capabilities = facets(cats), facets(caps)
	return ix, nil
}

func facets(m map[string]int) []facet {
	out := make([]facet, 0, len(m))
	for k, n := range m {
		out = append(out, facet{k, n})
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}

// newestHead is the channel's head bundle, the newest of its heads when
// it has several; nil when the catalog lacks it.
func (u *ui) newestHead(pkg string, ch *fbc.Channel) (*fbc.Bundle, error) {
	var best *fbc.Bundle
	var bestV semver.Version
	for _, h := range graph.Heads(ch) {
		b, err := u.bundleBlob(pkg, h)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		v, _ := graph.Version(b)
		if best == nil || v.GT(bestV) {
			best, bestV = b, v
		}
	}
	return best, nil
}

// bundleBlob is one bundle of a package; nil when there is none.
func (u *ui) bundleBlob(pkg, name string) (*fbc.Bundle, error) {
	var b *fbc.Bundle
	err := u.blobs(fbc.SchemaBundle, pkg, name, func(raw []byte) error {
		var x fbc.Bundle
		if err := json.Unmarshal(raw, &x); err != nil {
			return err
		}
		b = &x
		return nil
	})
	return b, err
}

// filter is what the index is asked for: words (all must be found),
// a category and a capability level.
type filter struct{ Query, Category, Capability string }

func (f filter) match(c *card) bool {
	for _, w := range strings.Fields(strings.ToLower(f.Query)) {
		if !strings.Contains(c.text, w) {
			return false
		}
	}
	if f.Capability != "" && c.Capability != f.Capability {
		return false
	}
	if f.Category != "" {
		found := false
		for _, cat := range c.Categories {
			found = found || cat == f.Category
		}
		if !found {
			return false
		}
	}
	return true
}

// with is the index URL of f with one field changed ("" drops it).
func (f filter) with(field, value string) string {
	switch field {
	case "category":
		f.Category = value
	case "capability":
		f.Capability = value
	case "q":
		f.Query = value
	}
	v := url.Values{}
	for k, s := range map[string]string{"q": f.Query, "category": f.Category, "capability": f.Capability} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}
