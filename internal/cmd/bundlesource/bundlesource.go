// Package bundlesource is how commands open a bundle named on the command
// line: an existing directory is a directory, anything else an image
// reference (registry, oci:, oci-archive:, docker-archive:).
package bundlesource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/validate"
)

// Opener opens bundles through one image client, made on first use, so
// directory-only runs never touch registry configuration and images share
// connections.
type Opener struct {
	// Load says how bundle directories are read (links out of them).
	Load bundle.LoadOptions

	imageOpts image.Options
	newClient func(image.Options) (*image.Client, error)

	once   sync.Once
	client *image.Client
	err    error
}

// NewOpener opens images with a client newClient makes from opts.
func NewOpener(opts image.Options, newClient func(image.Options) (*image.Client, error)) *Opener {
	return &Opener{imageOpts: opts, newClient: newClient}
}

// Opened is a loaded bundle and where it came from.
type Opened struct {
	Bundle *bundle.Bundle
	// Local is true for a directory, false for an image.
	Local bool
	// Labels are the image's config labels (nil for a directory).
	Labels map[string]string
}

// IsLocal reports whether arg names an existing directory.
func IsLocal(arg string) (bool, error) {
	st, err := os.Stat(arg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, fmt.Errorf("%s: not a directory (a bundle is a directory holding manifests/ and metadata/, or an image reference)", arg)
	}
	return true, nil
}

// CheckArg refuses early an argument that is neither a directory nor
// something that could be an image reference, so a mistyped path does not
// turn into a registry error.
func CheckArg(arg string) error {
	local, err := IsLocal(arg)
	if err != nil || local {
		return err
	}
	if !image.LooksLikeReference(arg) {
		return fmt.Errorf("%s: no such directory, and not an image reference", arg)
	}
	if _, err := image.ParseReference(arg); err != nil {
		return fmt.Errorf("%s: no such directory, and not a valid image reference: %w", arg, err)
	}
	return nil
}

func (o *Opener) imageClient() (*image.Client, error) {
	o.once.Do(func() {
		opts := o.imageOpts
		if err := opts.Validate(); err != nil {
			o.err = err
			return
		}
		o.client, o.err = o.newClient(opts)
	})
	return o.client, o.err
}

// Open loads the bundle arg names. Like bundle.Load, it may return a bundle
// together with an error describing what could not be read.
func (o *Opener) Open(ctx context.Context, arg string) (*Opened, error) {
	local, err := IsLocal(arg)
	if err != nil {
		return nil, err
	}
	if local {
		b, err := bundle.LoadDirWith(arg, o.Load)
		return &Opened{Bundle: b, Local: true}, err
	}
	if err := CheckArg(arg); err != nil {
		return nil, err
	}
	c, err := o.imageClient()
	if err != nil {
		return nil, err
	}
	im, err := c.OpenString(ctx, arg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = im.Close() }()
	fsys, err := im.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("read bundle image %s: %w", arg, err)
	}
	defer func() { _ = fsys.Close() }()
	// Load reads every file into memory, so the image can be closed after.
	b, err := bundle.Load(fsys)
	labels := im.Labels()
	if b != nil {
		// The image-labels rule compares them with annotations.yaml.
		b.Labels = labels
		if im.IndexDigest != nil {
			b.IndexDigest = im.IndexDigest.String()
		}
	}
	return &Opened{Bundle: b, Labels: labels}, err
}

// DirInput is a bundle directory to validate; links out of it are not
// followed.
func DirInput(path string) (validate.Input, error) { return DirInputWith(path, bundle.LoadOptions{}) }

// DirInputWith is DirInput reading the directory as lo says.
func DirInputWith(path string, lo bundle.LoadOptions) (validate.Input, error) {
	// Refuse an unreadable directory here, as an I/O error, rather than
	// reporting it as a finding.
	f, err := os.Open(path)
	if err == nil {
		_, err = f.ReadDir(1)
		f.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, io.EOF) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return validate.Input{}, fmt.Errorf("%s: %w", path, err)
	}
	return validate.DirInput(path, lo), nil
}

// FollowSymlinksFlag is the flag that lets bundle directories link to files
// outside themselves.
const FollowSymlinksFlag = "follow-symlinks"

// AddFlags registers how bundle directories are read on fs, bound to lo.
func AddFlags(fs *pflag.FlagSet, lo *bundle.LoadOptions) {
	fs.BoolVar(&lo.FollowSymlinks, FollowSymlinksFlag, false, "follow symbolic links in bundle directories that lead outside them (by default such a link is an error: the bundle, and an image built from it, would carry a file from elsewhere on this machine)")
}

// DirFS is the file system of a bundle directory as lo says to read it: by
// default, links that leave dir are refused when followed.
func DirFS(dir string, lo bundle.LoadOptions) (fs.FS, func() error, error) {
	if lo.FollowSymlinks {
		return os.DirFS(dir), func() error { return nil }, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return root.FS(), root.Close, nil
}

// Inputs turns arguments into validate inputs, opening images through one
// opener (one client, so connections are reused).
type Inputs struct {
	opener *Opener
	load   bundle.LoadOptions
	// Images counts the image arguments seen so far.
	Images int
	// Progress, when set, steps as each image is opened.
	Progress *iostreams.Progress
	// Failed counts images that could not be opened at all.
	Failed atomic.Int64
	// ShortShared, when set, keeps a cause an image shares with others of
	// its registry (image.SharedCause) out of its report: the report says
	// it could not be pulled, and SharedCauses says the cause once.
	ShortShared bool

	mu     sync.Mutex
	causes []sharedCause
}

// sharedCause is a registry's reason and the images that failed for it.
type sharedCause struct {
	cause  string
	images []string
}

// SharedCauses are the causes ShortShared kept out of the reports, each
// with the images that failed for it: "CAUSE (2 images: a, b)".
func (s *Inputs) SharedCauses() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.causes {
		images := slices.Sorted(slices.Values(c.images)) // not in the order the pulls ended
		out = append(out, fmt.Sprintf("%s (%d image(s): %s)", c.cause, len(images), listSome(images, 10)))
	}
	return out
}

func (s *Inputs) noteShared(arg string, err error) error {
	_, cause, ok := image.SharedCause(err)
	if !s.ShortShared || !ok {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.causes) && s.causes[i].cause != cause {
		i++
	}
	if i == len(s.causes) {
		s.causes = append(s.causes, sharedCause{cause: cause})
	}
	s.causes[i].images = append(s.causes[i].images, arg)
	return &sharedError{err: err}
}

// sharedError is a pull whose cause is said once after the report.
type sharedError struct{ err error }

func (e *sharedError) Error() string {
	return "could not be pulled: the registry's reason follows the report"
}
func (e *sharedError) Unwrap() error { return e.err }

// listSome joins the first n items and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// NewInputs reads directories with load and images through opener (whose
// Load it sets to load too).
func NewInputs(opener *Opener, load bundle.LoadOptions) *Inputs {
	opener.Load = load
	return &Inputs{opener: opener, load: load}
}

// Input turns a PATH|IMAGE argument into something to validate: an
// existing directory is a bundle directory, anything else an image reference
// (a mistyped path is refused here, before any registry is asked).
func (s *Inputs) Input(arg string) (validate.Input, error) {
	local, err := IsLocal(arg)
	if err != nil {
		return validate.Input{}, err
	}
	if local {
		return DirInputWith(arg, s.load)
	}
	if err := CheckArg(arg); err != nil {
		return validate.Input{}, err
	}
	s.Images++
	return validate.Input{
		Path: arg,
		Load: func(ctx context.Context) (*bundle.Bundle, error) {
			ob, err := s.opener.Open(ctx, arg)
			defer s.Progress.Step()
			if ob == nil {
				if ctx.Err() == nil {
					s.Failed.Add(1)
					err = s.noteShared(arg, err)
				}
				return nil, err
			}
			return ob.Bundle, err
		},
	}, nil
}
