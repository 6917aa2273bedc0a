package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Update graph modes of a community operator's ci.yaml (updateGraph).
const (
	UpdateGraphReplaces = "replaces-mode"
	UpdateGraphSemver   = "semver-mode"
)

// CIConfig is what the community rules read of an operator's ci.yaml:
// the update graph mode. Reviewers and the rest are the pipelines' own
// business and are not read.
type CIConfig struct {
	// File is where it was read ("" when there is none: replaces-mode).
	File string
	// UpdateGraph is updateGraph, replaces-mode when missing.
	UpdateGraph string
	// Err is why the file could not be read; the community package rules
	// report it.
	Err error
}

// ciConfigFor finds the ci.yaml of the package whose members are given:
// file when set (--ci-yaml), else operators/<name>/ci.yaml beside the
// first member directory that has one.
func ciConfigFor(file string, members []*Member) *CIConfig {
	if file == "" {
		for _, m := range members {
			st, err := os.Stat(m.Path)
			if err != nil || !st.IsDir() {
				continue
			}
			cand := filepath.Join(filepath.Dir(filepath.Clean(m.Path)), "ci.yaml")
			if _, err := os.Stat(cand); err == nil {
				file = cand
				break
			}
		}
	}
	if file == "" {
		return &CIConfig{UpdateGraph: UpdateGraphReplaces}
	}
	return ReadCIConfig(file)
}

// ReadCIConfig reads the updateGraph of the ci.yaml at file.
func ReadCIConfig(file string) *CIConfig {
	c := &CIConfig{File: file, UpdateGraph: UpdateGraphReplaces}
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			c.Err = fmt.Errorf("%s does not exist", file)
		} else {
			c.Err = err
		}
		return c
	}
	var doc struct {
		UpdateGraph *string `json:"updateGraph"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		c.Err = fmt.Errorf("%s: %w", file, err)
		return c
	}
	if doc.UpdateGraph != nil {
		c.UpdateGraph = *doc.UpdateGraph
	}
	return c
}

// semverMode says whether the pipelines build this package's graph from
// versions (each bundle replaced by the next higher in its channel), so
// that replaces, skips and skipRange make no edge of theirs.
func (c *CIConfig) semverMode() bool { return c != nil && c.UpdateGraph == UpdateGraphSemver }
