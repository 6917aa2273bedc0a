package index

import (
	"bytes"
)

// API is one group/version/kind a bundle provides or requires, with its
// plural (the api table's columns).
type API struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Plural  string `json:"plural"`
}

// TypedValue is one properties or dependencies row: a type and its JSON value.
type TypedValue struct {
	Type  string
	Value []byte
}

// BundleContent is what one bundle writes to an index database, in the form
// readers of the database see it. Converters to other catalog formats start
// from it, so that a bundle rendered on its own and the same bundle read back
// from a database agree.
type BundleContent struct {
	Name           string
	Package        string
	Channels       []string
	DefaultChannel string
	Version        string
	Release        string
	Replaces       string
	Skips          []string
	SkipRange      string
	// BundlePath is operatorbundle.bundlepath: the bundle image, or the
	// directory for a bundle loaded from disk.
	BundlePath string
	// CSV is the CSV as JSON (nil when the database holds none).
	CSV []byte
	// Objects are the bundle's objects as JSON, one each, in file order.
	Objects      [][]byte
	Provided     []API
	Required     []API
	Images       []string
	Properties   []TypedValue
	Dependencies []TypedValue
}

// ContentOf computes what lb would write to an index database, with the same
// checks as Add.
func ContentOf(lb LoadedBundle) (*BundleContent, error) {
	r, e := bundleRows(lb)
	if e != nil {
		return nil, e
	}
	csv, objects, err := r.text() // restores a spooled body too
	if err != nil {
		return nil, err
	}
	c := &BundleContent{
		Name: r.Name, Package: r.Package, Channels: r.Channels, DefaultChannel: r.Default,
		Version: r.VersionStr, Release: r.Version.Release.String(), Replaces: r.Replaces, Skips: r.Skips,
		SkipRange: r.SkipRange, BundlePath: r.Path, CSV: bytes.TrimSuffix(csv, []byte("\n")),
		Objects: splitObjects(objects), Images: r.Images,
	}
	for _, a := range r.Provided {
		c.Provided = append(c.Provided, API(a))
	}
	for _, a := range r.Required {
		c.Required = append(c.Required, API(a))
	}
	for _, p := range r.Properties {
		c.Properties = append(c.Properties, TypedValue(p))
	}
	for _, d := range r.Deps {
		c.Dependencies = append(c.Dependencies, TypedValue(d))
	}
	return c, nil
}

// splitObjects splits a bundle column (JSON objects, one per line).
func splitObjects(stream []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(stream, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		out = append(out, line)
	}
	return out
}

// joinObjects is the inverse of splitObjects.
func joinObjects(objs [][]byte) []byte {
	if len(objs) == 0 {
		return nil
	}
	var b bytes.Buffer
	for _, o := range objs {
		b.Write(o)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
