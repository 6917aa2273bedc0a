package mirror

import (
	"fmt"
	"regexp"

	"github.com/containers/image/v5/docker/reference"

	"github.com/opmkit/opm/internal/catalogimages"
)

// Blocked is an image a run leaves out because an ImageSetConfiguration's
// mirror.blockedImages names it.
type Blocked struct {
	Source string `json:"source"`
	// Entry is the blockedImages entry that matched.
	Entry string              `json:"entry"`
	Role  string              `json:"role"`
	Uses  []catalogimages.Use `json:"uses,omitempty"`
}

// Blocker matches images against mirror.blockedImages entries.
type Blocker struct {
	entries []blockEntry
}

type blockEntry struct {
	raw string
	// ref: the entry is a reference (normalized); repo: it names no tag
	// or digest, so it blocks every image of the repository.
	ref  string
	repo bool
	re   *regexp.Regexp
}

// NewBlocker reads mirror.blockedImages entries. An entry that is an image
// reference blocks that image when it names a tag or digest, and every
// image of the repository when it names neither (docker.io/library/alpine
// blocks alpine:3 and alpine@sha256:...; short names are normalized as
// pulls are). An entry that is not a reference is a regular expression
// (RE2), matched against each image's repository and its full reference
// (".*/alpine$", "^quay\.io/org/.*-debug"). An entry that is neither is an
// error naming it.
func NewBlocker(entries []string) (*Blocker, error) {
	b := &Blocker{}
	for _, e := range entries {
		be := blockEntry{raw: e}
		if named, err := reference.ParseNormalizedNamed(e); err == nil {
			be.ref = named.String()
			be.repo = reference.IsNameOnly(named)
			if be.repo {
				be.ref = named.Name()
			}
		} else {
			re, rerr := regexp.Compile(e)
			if rerr != nil {
				return nil, fmt.Errorf("mirror.blockedImages %q is neither an image reference (%v) nor a regular expression (%v)", e, err, rerr)
			}
			be.re = re
		}
		b.entries = append(b.entries, be)
	}
	return b, nil
}

// Match returns the entry that blocks the image source, or "".
func (b *Blocker) Match(source string) string {
	if b == nil {
		return ""
	}
	named, err := reference.ParseNormalizedNamed(source)
	if err != nil {
		return ""
	}
	full, repo := named.String(), named.Name()
	for _, e := range b.entries {
		switch {
		case e.re != nil:
			if e.re.MatchString(repo) || e.re.MatchString(full) || e.re.MatchString(source) {
				return e.raw
			}
		case e.repo:
			if e.ref == repo {
				return e.raw
			}
		case sameImage(e.ref, full):
			return e.raw
		}
	}
	return ""
}

// sameImage says whether the reference a (an entry with a tag and/or a
// digest) names the image b: the same repository and, of what a names,
// the same tag and digest (an entry repo:tag blocks repo:tag@sha256:X).
func sameImage(a, b string) bool {
	na, err1 := reference.ParseNormalizedNamed(a)
	nb, err2 := reference.ParseNormalizedNamed(b)
	if err1 != nil || err2 != nil || na.Name() != nb.Name() {
		return false
	}
	if ta, ok := na.(reference.Tagged); ok {
		tb, ok := nb.(reference.Tagged)
		if !ok || tb.Tag() != ta.Tag() {
			return false
		}
	}
	if da, ok := na.(reference.Digested); ok {
		db, ok := nb.(reference.Digested)
		if !ok || db.Digest() != da.Digest() {
			return false
		}
	}
	return true
}

// Block takes out of items the images b blocks (never a catalog: its
// blockedImages entries are about the images it names). kept keeps the
// order of items.
func Block(items []Item, b *Blocker) (kept []Item, blocked []Blocked) {
	for _, it := range items {
		if it.Role != RoleCatalog {
			if e := b.Match(it.Source); e != "" {
				blocked = append(blocked, Blocked{Source: it.Source, Entry: e, Role: it.Role, Uses: it.Uses})
				continue
			}
		}
		kept = append(kept, it)
	}
	return kept, blocked
}

// Dedupe keeps one item per image (several catalogs, or an additional
// image a catalog also names, list it more than once): the first, with
// the bundles of all that use it.
func Dedupe(items []Item) []Item {
	at := map[string]int{}
	var out []Item
	for _, it := range items {
		name := layoutName(it.Source)
		if named, err := reference.ParseNormalizedNamed(it.Source); err == nil {
			name = reference.TagNameOnly(named).String() // nginx is nginx:latest
		}
		if i, ok := at[name]; ok && it.Role != RoleCatalog && out[i].Role != RoleCatalog {
			out[i].Uses = append(out[i].Uses, it.Uses...)
			continue
		}
		at[name] = len(out)
		out = append(out, it)
	}
	return out
}
