package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// CSV kinds and API version.
const (
	CSVKind       = "ClusterServiceVersion"
	CSVAPIVersion = "operators.coreos.com/v1alpha1"
)

// Well-known CSV annotations.
const (
	AnnotationALMExamples     = "alm-examples"
	AnnotationOLMExamples     = "olm.examples"
	AnnotationSkipRange       = "olm.skipRange"
	AnnotationSubstitutesFor  = "olm.substitutesFor"
	AnnotationInternalObjects = "operators.operatorframework.io/internal-objects"
	AnnotationProperties      = "olm.properties"
)

// Install mode types.
const (
	InstallModeOwnNamespace    = "OwnNamespace"
	InstallModeSingleNamespace = "SingleNamespace"
	InstallModeMultiNamespace  = "MultiNamespace"
	InstallModeAllNamespaces   = "AllNamespaces"
)

// InstallModeTypes lists the four install mode types OLM knows.
var InstallModeTypes = []string{InstallModeOwnNamespace, InstallModeSingleNamespace, InstallModeMultiNamespace, InstallModeAllNamespaces}

// CSV is a typed view of a ClusterServiceVersion. The object it came from
// (Object) keeps every field, known or not, so nothing is lost when a CSV is
// written back out; the typed view is for the rules to read.
type CSV struct {
	Object *Object `json:"-"`
	// TypeErrors are fields whose YAML type does not fit the schema (a number
	// where a string belongs, ...). The rest of the CSV is still decoded.
	TypeErrors []FieldTypeError `json:"-"`

	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   ObjectMeta  `json:"metadata"`
	Spec       CSVSpec     `json:"spec"`
	Status     interface{} `json:"status,omitempty"`
}

// ObjectMeta is the part of Kubernetes object metadata that rules read.
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// CSVSpec holds the CSV spec fields listed in FORMATS.md.
type CSVSpec struct {
	Version                   string                    `json:"version"`
	Release                   string                    `json:"release,omitempty"`
	Replaces                  string                    `json:"replaces,omitempty"`
	Skips                     []string                  `json:"skips,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	InstallModes              []InstallMode             `json:"installModes,omitempty"`
	Install                   InstallStrategy           `json:"install"`
	CustomResourceDefinitions CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`
	APIServiceDefinitions     APIServiceDefinitions     `json:"apiservicedefinitions,omitempty"`
	WebhookDefinitions        []WebhookDefinition       `json:"webhookdefinitions,omitempty"`
	RelatedImages             []RelatedImage            `json:"relatedImages,omitempty"`
	Icon                      []Icon                    `json:"icon,omitempty"`
	Maintainers               []Maintainer              `json:"maintainers,omitempty"`
	Links                     []Link                    `json:"links,omitempty"`
	Provider                  Provider                  `json:"provider,omitempty"`
	Maturity                  string                    `json:"maturity,omitempty"`
	DisplayName               string                    `json:"displayName,omitempty"`
	Description               string                    `json:"description,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Selector                  interface{}               `json:"selector,omitempty"`
	NativeAPIs                []GroupVersionKind        `json:"nativeAPIs,omitempty"`
	Cleanup                   interface{}               `json:"cleanup,omitempty"`
}

// InstallMode says whether the operator supports one way of watching namespaces.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// InstallStrategy is spec.install.
type InstallStrategy struct {
	Strategy string              `json:"strategy"`
	Spec     InstallStrategySpec `json:"spec,omitempty"`
}

// InstallStrategySpec is spec.install.spec for the deployment strategy.
type InstallStrategySpec struct {
	Deployments        []DeploymentSpec     `json:"deployments,omitempty"`
	Permissions        []StrategyPermission `json:"permissions,omitempty"`
	ClusterPermissions []StrategyPermission `json:"clusterPermissions,omitempty"`
}

// DeploymentSpec is one named deployment; its spec stays generic except for
// what the rules read.
type DeploymentSpec struct {
	Name  string            `json:"name"`
	Label map[string]string `json:"label,omitempty"`
	Spec  DeploymentBody    `json:"spec"`
}

// DeploymentBody is the part of a Deployment spec rules read.
type DeploymentBody struct {
	Template PodTemplate `json:"template"`
}

// PodTemplate is the part of a pod template rules read.
type PodTemplate struct {
	Spec PodSpec `json:"spec"`
}

// PodSpec is the part of a pod spec rules read.
type PodSpec struct {
	ServiceAccountName string      `json:"serviceAccountName,omitempty"`
	Containers         []Container `json:"containers,omitempty"`
	InitContainers     []Container `json:"initContainers,omitempty"`
}

// Container is the part of a container rules read.
type Container struct {
	Name  string   `json:"name"`
	Image string   `json:"image"`
	Env   []EnvVar `json:"env,omitempty"`
}

// EnvVar is a container's environment variable (a literal value; values
// taken from elsewhere are not read).
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// StrategyPermission binds RBAC rules to a service account.
type StrategyPermission struct {
	ServiceAccountName string        `json:"serviceAccountName"`
	Rules              []interface{} `json:"rules,omitempty"`
}

// CustomResourceDefinitions is spec.customresourcedefinitions.
type CustomResourceDefinitions struct {
	Owned    []CRDDescription `json:"owned,omitempty"`
	Required []CRDDescription `json:"required,omitempty"`
}

// CRDDescription describes an owned or required CRD.
type CRDDescription struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
}

// APIServiceDefinitions is spec.apiservicedefinitions.
type APIServiceDefinitions struct {
	Owned    []APIServiceDescription `json:"owned,omitempty"`
	Required []APIServiceDescription `json:"required,omitempty"`
}

// APIServiceDescription describes an aggregated API.
type APIServiceDescription struct {
	Name           string `json:"name"`
	Group          string `json:"group"`
	Version        string `json:"version"`
	Kind           string `json:"kind"`
	DeploymentName string `json:"deploymentName,omitempty"`
	DisplayName    string `json:"displayName,omitempty"`
}

// WebhookDefinition is one entry of spec.webhookdefinitions.
type WebhookDefinition struct {
	Type                    string        `json:"type"`
	GenerateName            string        `json:"generateName"`
	DeploymentName          string        `json:"deploymentName"`
	ConversionCRDs          []string      `json:"conversionCRDs,omitempty"`
	AdmissionReviewVersions []string      `json:"admissionReviewVersions,omitempty"`
	Rules                   []WebhookRule `json:"rules,omitempty"`
}

// WebhookRule is the part of an admission webhook's rule that rules read.
type WebhookRule struct {
	APIGroups []string `json:"apiGroups,omitempty"`
	Resources []string `json:"resources,omitempty"`
}

// RelatedImage is an image the operator uses, for mirroring.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Icon is one icon of the operator.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Maintainer is a contact.
type Maintainer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Link is a named URL.
type Link struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Provider is who publishes the operator.
type Provider struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// GroupVersionKind names an API.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// FieldTypeError is a field whose YAML type does not fit.
type FieldTypeError struct {
	Field string // e.g. spec.release
	Want  string // e.g. string
	Got   string // e.g. number
}

func (e FieldTypeError) Error() string {
	return fmt.Sprintf("%s is a %s, not a %s", e.Field, e.Got, e.Want)
}

// decodeCSV builds the typed view of obj: directly from its values when
// decodeCSVDirect can (csvdirect.go), else by the JSON round trip.
func decodeCSV(obj *Object) *CSV {
	if csv, ok := decodeCSVDirect(obj); ok {
		return csv
	}
	return decodeCSVRoundTrip(obj)
}

// decodeCSVRoundTrip builds the typed view of obj through JSON. Type
// mismatches are collected one field at a time: the mismatching field is
// dropped and decoding goes on, so one bad field never hides the rest of the
// CSV from the rules.
func decodeCSVRoundTrip(obj *Object) *CSV {
	csv := &CSV{Object: obj}
	value := obj.Doc.Value
	copied := false
	for range 64 {
		raw, err := json.Marshal(value)
		if err != nil {
			break
		}
		var c CSV
		err = json.Unmarshal(raw, &c)
		var te *json.UnmarshalTypeError
		if err == nil || !errors.As(err, &te) || te.Field == "" {
			c.Object, c.TypeErrors = obj, csv.TypeErrors
			*csv = c
			return csv
		}
		csv.TypeErrors = append(csv.TypeErrors, FieldTypeError{Field: te.Field, Want: typeName(te.Type.Kind().String()), Got: jsonTypeName(te.Value)})
		if !copied {
			// Only now pay for a copy: the object itself must stay whole.
			value, copied = deepCopy(value), true
		}
		if !deletePath(value, te.Field) {
			break
		}
	}
	// Could not isolate the bad field: keep the best effort decode.
	raw, _ := json.Marshal(value)
	_ = json.Unmarshal(raw, csv)
	csv.Object = obj
	return csv
}

// jsonTypeName turns encoding/json's name of a JSON value ("object",
// "array", "bool", "number 1.5") into the YAML words messages use.
func jsonTypeName(v string) string {
	switch {
	case v == "object":
		return "mapping"
	case v == "array":
		return "list"
	case v == "bool":
		return "boolean"
	case strings.HasPrefix(v, "number"):
		return "number"
	}
	return v
}

func typeName(kind string) string {
	switch kind {
	case "struct", "map":
		return "mapping"
	case "slice", "array":
		return "list"
	case "bool":
		return "boolean"
	case "int", "int64", "float64":
		return "number"
	}
	return kind
}

// deletePath removes the value at a json field path such as
// "spec.installModes.1.type" (encoding/json reports list indexes as numbers in
// recent Go versions and drops them in older ones).
func deletePath(v any, path string) bool {
	segs := splitDots(path)
	return deleteSegs(v, segs)
}

func deleteSegs(v any, segs []string) bool {
	if len(segs) == 0 {
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		if len(segs) == 1 {
			if _, ok := t[segs[0]]; ok {
				delete(t, segs[0])
				return true
			}
			return false
		}
		return deleteSegs(t[segs[0]], segs[1:])
	case []any:
		var idx int
		if _, err := fmt.Sscanf(segs[0], "%d", &idx); err == nil && idx >= 0 && idx < len(t) {
			return deleteSegs(t[idx], segs[1:])
		}
		// No index in the path: try every element.
		done := false
		for _, e := range t {
			if deleteSegs(e, segs) {
				done = true
			}
		}
		return done
	}
	return false
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}
