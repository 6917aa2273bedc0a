package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/catalogfilter"
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indexchange"
	"github.com/opmkit/opm/internal/printable"
)

// ImageSetRequest is an ImageSetConfiguration to plan a mirror of.
type ImageSetRequest struct {
	// Path is the ImageSetConfiguration file, named in messages.
	Path   string
	Client *image.Client
	// Work is the directory the filtered catalogs are rebuilt in (OCI
	// layouts the mirror copies from).
	Work string
	// Cache is the database cache directory (indeximage.CacheIn).
	Cache string
	// Warn and Say, when set, are told warnings and what each catalog's
	// filter removed, as they come.
	Warn, Say func(string)
	// Images lists the images a rebuilt catalog (an image reference)
	// needs; source is the catalog it was filtered from, for messages.
	Images func(ctx context.Context, catalog, source string) ([]catalogimages.Image, error)
}

// ConfigError is an ImageSetConfiguration at fault (unreadable, invalid,
// or naming what cannot be mirrored): nothing was read.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// PlanImageSet reads the ImageSetConfiguration req.Path and plans its
// mirror: each catalog it names filtered as opm alpha filter does and
// rebuilt as opm index filter does (its layers, the catalog layer
// replaced, the serve cache rebuilt) into an OCI layout under req.Work,
// then the images of what is kept; mirror.additionalImages; and what
// mirror.blockedImages leaves out.
func PlanImageSet(ctx context.Context, req ImageSetRequest) ([]Item, []Blocked, error) {
	warn, say := req.Warn, req.Say
	if warn == nil {
		warn = func(string) {}
	}
	if say == nil {
		say = func(string) {}
	}
	path := req.Path
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &ConfigError{fmt.Errorf("read --config: %w", err)}
	}
	set, err := catalogfilter.ParseImageSet(path, data)
	if err != nil {
		return nil, nil, &ConfigError{err}
	}
	blocker, err := NewBlocker(set.Blocked)
	if err != nil {
		return nil, nil, &ConfigError{fmt.Errorf("%s: %w", path, err)}
	}
	// Every reference is checked before anything is read.
	for _, c := range set.Catalogs {
		if ref, err := image.ParseReference(c.Ref); err != nil || ref.Transport != image.TransportRegistry {
			return nil, nil, &ConfigError{fmt.Errorf("%s: mirror.operators catalog %q: give a catalog image in a registry", path, c.Ref)}
		}
	}
	for _, a := range set.Additional {
		if ref, err := image.ParseReference(a); err != nil || ref.Transport != image.TransportRegistry {
			return nil, nil, &ConfigError{fmt.Errorf("%s: mirror.additionalImages %q: give an image in a registry, by tag or digest", path, a)}
		}
	}

	var items []Item
	for i, c := range set.Catalogs {
		if len(c.Ignored) > 0 {
			warn(fmt.Sprintf("%s: mirror.operators[%d] (%s): %s not applied: the filtered catalog goes under its source's repository and tag",
				printable.Name(path), i, printable.Name(c.Ref), strings.Join(c.Ignored, " and ")))
		}
		layout := "oci:" + filepath.Join(req.Work, fmt.Sprintf("catalog-%d", i)) + ":filtered"
		res, err := indexchange.Apply(ctx, indexchange.Request{
			Client: req.Client, FromIndex: c.Ref, Tag: layout, Cache: req.Cache,
			Warn: func(w string) { warn(printable.Text(w)) },
		}, func(db *index.DB) error {
			rep, err := catalogfilter.FilterDB(ctx, db, c.Config)
			if err == nil {
				say(fmt.Sprintf("filtered %s: removed %d bundles, kept %d outside a range", printable.Name(c.Ref), len(rep.Removed), len(rep.Extra)))
			}
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("filter %s (%s): %w\nnothing was copied", c.Ref, path, err)
		}
		if res.Image != nil {
			for _, w := range res.Image.Warnings {
				warn(fmt.Sprintf("%s: %s", printable.Name(c.Ref), printable.Text(w)))
			}
		}
		// The images of what is kept, read from the rebuilt image.
		images, err := req.Images(ctx, layout, c.Ref)
		if err != nil {
			return nil, nil, err
		}
		plan := Plan(c.Ref, images)
		plan[0].From, plan[0].Rebuilt = layout, true
		items = append(items, plan...)
	}
	for _, a := range set.Additional {
		items = append(items, Item{Source: a, Role: RoleAdditional})
	}
	kept, blocked := Block(Dedupe(items), blocker)
	return kept, blocked, nil
}
