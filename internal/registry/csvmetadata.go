package registry

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opmkit/opm/internal/index"
)

// A bundle of a file-based catalog may carry its CSV only as an
// olm.csv.metadata property (render --migrate-level
// bundle-object-to-csv-metadata): the database then holds no CSV for it.
// Upstream's opm serve answers such a bundle with a CSV built from that
// summary, named after the bundle, with the package's icon, the bundle's
// version and related images, an install strategy named "deployment"
// (OLM's package server needs one) and the package's description when the
// summary has none; the CSV is also the bundle's only object. This does the
// same.

// packageMeta is what a database made from a catalog keeps of a package
// blob: the fields a synthesized CSV takes.
type packageMeta struct {
	Description string `json:"description"`
	Icon        *struct {
		Data      []byte `json:"base64data"`
		MediaType string `json:"mediatype"`
	} `json:"icon"`
}

// csvMetadataValue is the olm.csv.metadata value, read into the shapes of
// OLM's CSV types: upstream decodes it into them and marshals them back,
// so fields they lack are dropped and keys come out in their order.
type csvMetadataValue struct {
	Annotations           map[string]string `json:"annotations,omitempty"`
	APIServiceDefinitions apiServiceDefs    `json:"apiServiceDefinitions,omitempty"`
	CRDDescriptions       crdDefs           `json:"crdDescriptions,omitempty"`
	Description           string            `json:"description,omitempty"`
	DisplayName           string            `json:"displayName,omitempty"`
	InstallModes          []installMode     `json:"installModes,omitempty"`
	Keywords              []string          `json:"keywords,omitempty"`
	Labels                map[string]string `json:"labels,omitempty"`
	Links                 []appLink         `json:"links,omitempty"`
	Maintainers           []maintainer      `json:"maintainers,omitempty"`
	Maturity              string            `json:"maturity,omitempty"`
	MinKubeVersion        string            `json:"minKubeVersion,omitempty"`
	NativeAPIs            []nativeAPI       `json:"nativeAPIs,omitempty"`
	Provider              appLink           `json:"provider,omitempty"`
}

// The parts of a CSV spec, keys in the order of OLM's types.
type (
	crdDefs struct {
		Owned    []crdDescription `json:"owned,omitempty"`
		Required []crdDescription `json:"required,omitempty"`
	}
	crdDescription struct {
		Name              string        `json:"name"`
		Version           string        `json:"version"`
		Kind              string        `json:"kind"`
		DisplayName       string        `json:"displayName,omitempty"`
		Description       string        `json:"description,omitempty"`
		Resources         []resourceRef `json:"resources,omitempty"`
		StatusDescriptors []descriptor  `json:"statusDescriptors,omitempty"`
		SpecDescriptors   []descriptor  `json:"specDescriptors,omitempty"`
		ActionDescriptors []descriptor  `json:"actionDescriptors,omitempty"`
	}
	apiServiceDefs struct {
		Owned    []apiServiceDescription `json:"owned,omitempty"`
		Required []apiServiceDescription `json:"required,omitempty"`
	}
	apiServiceDescription struct {
		Name              string        `json:"name"`
		Group             string        `json:"group"`
		Version           string        `json:"version"`
		Kind              string        `json:"kind"`
		DeploymentName    string        `json:"deploymentName,omitempty"`
		ContainerPort     int32         `json:"containerPort,omitempty"`
		DisplayName       string        `json:"displayName,omitempty"`
		Description       string        `json:"description,omitempty"`
		Resources         []resourceRef `json:"resources,omitempty"`
		StatusDescriptors []descriptor  `json:"statusDescriptors,omitempty"`
		SpecDescriptors   []descriptor  `json:"specDescriptors,omitempty"`
		ActionDescriptors []descriptor  `json:"actionDescriptors,omitempty"`
	}
	resourceRef struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Version string `json:"version"`
	}
	descriptor struct {
		Path         string          `json:"path"`
		DisplayName  string          `json:"displayName,omitempty"`
		Description  string          `json:"description,omitempty"`
		XDescriptors []string        `json:"x-descriptors,omitempty"`
		Value        json.RawMessage `json:"value,omitempty"`
	}
	installMode struct {
		Type      string `json:"type"`
		Supported bool   `json:"supported"`
	}
	appLink struct {
		Name string `json:"name,omitempty"`
		URL  string `json:"url,omitempty"`
	}
	maintainer struct {
		Name  string `json:"name,omitempty"`
		Email string `json:"email,omitempty"`
	}
	nativeAPI struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	}
)

type csvIcon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

type csvRelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// synthesizedCSV is the CSV built from a summary, keys in the order of
// OLM's ClusterServiceVersion type as upstream HEAD's opm serve marshals it
// (operator-framework/api v0.45): an empty install spec, empty CRD and API
// service definitions when the summary has none, cleanup disabled, and a
// status with an empty cleanup.
type synthesizedCSV struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Install struct {
			Strategy string `json:"strategy"`
			Spec     struct {
				Deployments json.RawMessage `json:"deployments"`
			} `json:"spec"`
		} `json:"install"`
		Version                   string         `json:"version,omitempty"`
		Maturity                  string         `json:"maturity,omitempty"`
		CustomResourceDefinitions crdDefs        `json:"customresourcedefinitions"`
		APIServiceDefinitions     apiServiceDefs `json:"apiservicedefinitions"`
		NativeAPIs                []nativeAPI    `json:"nativeAPIs,omitempty"`
		MinKubeVersion            string         `json:"minKubeVersion,omitempty"`
		DisplayName               string         `json:"displayName"`
		Description               string         `json:"description,omitempty"`
		Keywords                  []string       `json:"keywords,omitempty"`
		Maintainers               []maintainer   `json:"maintainers,omitempty"`
		Provider                  appLink        `json:"provider,omitempty"`
		Links                     []appLink      `json:"links,omitempty"`
		Icon                      []csvIcon      `json:"icon,omitempty"`
		InstallModes              []installMode  `json:"installModes,omitempty"`
		Cleanup                   struct {
			Enabled bool `json:"enabled"`
		} `json:"cleanup"`
		RelatedImages []csvRelatedImage `json:"relatedImages,omitempty"`
	} `json:"spec"`
	Status struct {
		Cleanup struct{} `json:"cleanup"`
	} `json:"status"`
}

// csvFromMetadata builds the CSV of a bundle that has none from its one
// olm.csv.metadata property; "" when it has none or several.
func (s *SQLite) csvFromMetadata(ctx context.Context, name, pkg, version string, props []typedRow) (string, error) {
	var value string
	n := 0
	for _, p := range props {
		if p.typ == "olm.csv.metadata" {
			value = p.value
			n++
		}
	}
	if n != 1 {
		return "", nil
	}
	var m csvMetadataValue
	if err := json.Unmarshal([]byte(value), &m); err != nil {
		return "", fmt.Errorf("bundle %s: olm.csv.metadata: %w", name, err)
	}
	csv := synthesizedCSV{Kind: "ClusterServiceVersion", APIVersion: "operators.coreos.com/v1alpha1"}
	csv.Metadata.Name, csv.Metadata.Labels, csv.Metadata.Annotations = name, m.Labels, m.Annotations
	sp := &csv.Spec
	sp.Install.Strategy = "deployment"
	sp.Version, sp.Maturity, sp.MinKubeVersion = version, m.Maturity, m.MinKubeVersion
	sp.Install.Spec.Deployments = json.RawMessage(`null`)
	sp.CustomResourceDefinitions, sp.APIServiceDefinitions, sp.NativeAPIs = m.CRDDescriptions, m.APIServiceDefinitions, m.NativeAPIs
	sp.DisplayName, sp.Description = m.DisplayName, m.Description
	sp.Keywords, sp.Maintainers, sp.Provider, sp.Links, sp.InstallModes = m.Keywords, m.Maintainers, m.Provider, m.Links, m.InstallModes
	if pm := s.packages[pkg]; pm != nil {
		if pm.Icon != nil {
			sp.Icon = []csvIcon{{Data: base64.StdEncoding.EncodeToString(pm.Icon.Data), MediaType: pm.Icon.MediaType}}
		}
		if sp.Description == "" {
			sp.Description = pm.Description
		}
	}
	// The catalog's related images, names included, when the database
	// kept them; else the images of the related_image table.
	var kept sql.NullString
	if s.metas {
		err := s.db.QueryRowContext(ctx, `SELECT blob FROM `+index.MetaTable+` WHERE schema = 'olm.bundle' AND package_name = ? AND name = ?`, pkg, name).Scan(&kept)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return "", s.wrap("related images of "+name, err)
		}
	}
	if kept.Valid {
		var bi struct {
			RelatedImages []csvRelatedImage `json:"relatedImages"`
		}
		if err := json.Unmarshal([]byte(kept.String), &bi); err != nil {
			return "", fmt.Errorf("bundle %s: kept related images: %w", name, err)
		}
		sp.RelatedImages = bi.RelatedImages
		return marshalCSV(name, csv)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT image FROM related_image WHERE operatorbundle_name = ? AND image IS NOT NULL ORDER BY rowid`, name)
	if err != nil {
		return "", s.wrap("related images of "+name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var img string
		if err := rows.Scan(&img); err != nil {
			return "", s.wrap("related images of "+name, err)
		}
		sp.RelatedImages = append(sp.RelatedImages, csvRelatedImage{Image: img})
	}
	if err := rows.Err(); err != nil {
		return "", s.wrap("related images of "+name, err)
	}
	return marshalCSV(name, csv)
}

func marshalCSV(name string, csv synthesizedCSV) (string, error) {
	out, err := json.Marshal(csv)
	if err != nil {
		return "", fmt.Errorf("bundle %s: %w", name, err)
	}
	return string(out), nil
}
