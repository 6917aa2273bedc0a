package bundle

import (
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/yamldoc"
)

// Annotation keys of metadata/annotations.yaml, also the bundle image labels.
const (
	AnnotationMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"

	MediaTypeRegistryV1 = "registry+v1"
	MediaTypeHelm       = "helm"
	MediaTypePlain      = "plain"

	ManifestsDir = "manifests"
	MetadataDir  = "metadata"

	AnnotationsFile  = "metadata/annotations.yaml"
	PropertiesFile   = "metadata/properties.yaml"
	DependenciesFile = "metadata/dependencies.yaml"
)

// RequiredAnnotations are the keys every bundle's annotations.yaml must hold.
var RequiredAnnotations = []string{AnnotationMediaType, AnnotationManifests, AnnotationMetadata, AnnotationPackage, AnnotationChannels}

// Annotations is metadata/annotations.yaml.
type Annotations struct {
	File string
	Doc  yamldoc.Document
	// Values holds every annotation whose value is a string.
	Values map[string]string
	// NonString lists keys whose value is not a string (a YAML number, ...).
	NonString []string
}

func decodeAnnotations(file string, doc yamldoc.Document) *Annotations {
	a := &Annotations{File: file, Doc: doc, Values: map[string]string{}}
	for k, v := range MapAt(doc.Value, "annotations") {
		if s, ok := v.(string); ok {
			a.Values[k] = s
		} else {
			a.NonString = append(a.NonString, k)
		}
	}
	sort.Strings(a.NonString)
	return a
}

// Package is the package name annotation.
func (a *Annotations) Package() string { return a.Values[AnnotationPackage] }

// DefaultChannel is the default channel annotation ("" when absent).
func (a *Annotations) DefaultChannel() string {
	return strings.TrimSpace(a.Values[AnnotationDefaultChannel])
}

// Channels splits the comma-separated channel list, dropping blanks.
func (a *Annotations) Channels() []string { return SplitChannels(a.Values[AnnotationChannels]) }

// SplitChannels splits a comma-separated channel list, trimming each name and
// dropping empty ones.
func SplitChannels(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Property is one entry of metadata/properties.yaml (or dependencies.yaml):
// a type and a free-form value.
type Property struct {
	Type  string
	Value any
	Field string // e.g. properties[2], for messages
}

func decodeProperties(doc yamldoc.Document, key string) []Property {
	var out []Property
	for i, p := range Slice(doc.Value, key) {
		out = append(out, Property{Type: Str(p, "type"), Value: mapValue(p, "value"), Field: key + "[" + itoa(i) + "]"})
	}
	return out
}

func mapValue(v any, key string) any {
	x, _ := Lookup(v, key)
	return x
}
