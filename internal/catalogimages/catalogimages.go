// Package catalogimages lists the images a catalog needs: each bundle's
// image and its related images, with who uses each and as what. An image
// named by digest is one image however many repositories or names list it
// (what a mirror copies once).
package catalogimages

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/printable"
)

// Use is one place an image is needed.
type Use struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	// As is "bundle" for the bundle's own image, else "related" (Name
	// is then the related image's name, when it has one).
	As   string `json:"as"`
	Name string `json:"name,omitempty"`
}

// Image is one image and every use of it.
type Image struct {
	// Image is the pull spec as first listed (by package, bundle).
	Image string `json:"image"`
	// Digest is the sha256 digest of a pull spec pinned by digest ("" for
	// a tag).
	Digest string `json:"digest,omitempty"`
	// Also are other pull specs of the same digest (other repositories
	// or tags beside the digest).
	Also []string `json:"also,omitempty"`
	Uses []Use    `json:"uses"`
}

// List returns the images of c (of package pkg, when not ""), by pull spec.
func List(c *fbc.Catalog, pkg string) []Image {
	byKey := map[string]*Image{}
	var keys []string
	add := func(ref string, u Use) {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			return
		}
		key, digest := ref, Digest(ref)
		if digest != "" {
			key = digest
		}
		im := byKey[key]
		if im == nil {
			im = &Image{Image: ref, Digest: digest}
			byKey[key] = im
			keys = append(keys, key)
		} else if ref != im.Image && !slices.Contains(im.Also, ref) {
			im.Also = append(im.Also, ref)
		}
		im.Uses = append(im.Uses, u)
	}
	bundles := append([]fbc.Bundle(nil), c.Bundles...)
	sort.SliceStable(bundles, func(i, j int) bool {
		if bundles[i].Package != bundles[j].Package {
			return bundles[i].Package < bundles[j].Package
		}
		return bundles[i].Name < bundles[j].Name
	})
	for _, b := range bundles {
		if pkg != "" && b.Package != pkg {
			continue
		}
		add(b.Image, Use{Package: b.Package, Bundle: b.Name, As: "bundle"})
		for _, r := range b.RelatedImages {
			if r.Image == b.Image {
				continue // a bundle lists itself among its related images
			}
			add(r.Image, Use{Package: b.Package, Bundle: b.Name, As: "related", Name: r.Name})
		}
	}
	out := make([]Image, 0, len(keys))
	for _, k := range keys {
		im := byKey[k]
		sort.Strings(im.Also)
		out = append(out, *im)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out
}

// Digest is the sha256 digest a pull spec is pinned by ("" when it is
// not).
func Digest(ref string) string {
	i := strings.LastIndex(ref, "@")
	if i < 0 {
		return ""
	}
	d := ref[i+1:]
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		return ""
	}
	for _, c := range d[len("sha256:"):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ""
		}
	}
	return d
}

// WriteTable prints images a row each: the image, its first use (and how
// many more), and as what.
func WriteTable(w io.Writer, images []Image) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tUSED BY\tAS")
	for _, im := range images {
		u := im.Uses[0]
		by := u.Package + "/" + u.Bundle
		if n := len(im.Uses) - 1; n > 0 {
			by += fmt.Sprintf(" (+%d)", n)
		}
		as := u.As
		if u.Name != "" {
			as += " " + u.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", printable.Name(im.Image), printable.Name(by), printable.Name(as))
	}
	return tw.Flush()
}
