package indexchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/validate"
)

// Bundles are the bundles an add loads.
type Bundles struct {
	// Args are the bundle directories and image references, as the index
	// records them.
	Args []string
	// Open reads one bundle from a directory or an image. Like
	// bundle.Load it may return a bundle with an error saying what could
	// not be read; a nil bundle means it could not be read at all.
	Open func(ctx context.Context, from string) (b *bundle.Bundle, local bool, err error)
	// From, when it has an entry for an argument, names where to read
	// that bundle instead (an archive a pull tool saved).
	From map[string]string
	// Permissive returns bundles that cannot be added as skipped instead
	// of failing the load.
	Permissive bool
	// Step, when set, is called as each bundle is done (a progress line).
	Step func()
	// Spool holds the bundles' text until the add writes it (see
	// index.Prepare).
	Spool *index.Spool
}

// LoadBundles opens every bundle, several at once, and checks each with
// validate.CheckForIndex, the index rules of opm bundle validate. Without
// Permissive, any bundle that cannot be read whole or that the rules refuse
// fails the load with every problem found (refusals name their rule ids),
// before anything is written. With Permissive, such bundles are returned
// as skipped, each with its reason, and the rest loaded.
func LoadBundles(ctx context.Context, in Bundles) ([]index.LoadedBundle, []index.Skipped, error) {
	args := in.Args
	out := make([]index.LoadedBundle, len(args))
	errs := make([]error, len(args))
	// unreachable marks images that could not be opened at all, as opposed
	// to bundles that were read and found broken: the advice differs.
	unreachable := make([]bool, len(args))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)+2)
	var wg sync.WaitGroup
	for i, arg := range args {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if in.Step != nil {
				defer in.Step()
			}
			from := arg
			if o, ok := in.From[arg]; ok {
				from = o
			}
			b, local, err := in.Open(ctx, from)
			if b != nil && ctx.Err() == nil {
				// What was read is judged by the index rules, so that a
				// refusal names the rule ids bundle validate gives.
				if refused := validate.CheckForIndex(arg, b, err).Err(); refused != nil {
					errs[i] = refused
					return
				}
			}
			if err != nil {
				errs[i] = fmt.Errorf("load bundle %s: %w", arg, err)
				if b == nil {
					unreachable[i] = !isDir(from)
				}
				return
			}
			// Only the rows are kept, their text in the spool: thousands
			// of parsed bundles would hold gigabytes.
			out[i] = index.Prepare(index.LoadedBundle{Bundle: b, BundlePath: arg, Local: local}, in.Spool)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if !in.Permissive {
		if err := errors.Join(groupCauses(args, errs)...); err != nil {
			return nil, nil, fmt.Errorf("%w\n%s (--permissive adds the other bundles)", err, loadAdvice(args, errs, unreachable))
		}
		return out, nil, nil
	}
	var loaded []index.LoadedBundle
	var skipped []index.Skipped
	for i, err := range errs {
		if err == nil {
			loaded = append(loaded, out[i])
			continue
		}
		ref := index.BundleRef{Path: args[i], Name: args[i]}
		var refused *validate.RefusedError
		if errors.As(err, &refused) && refused.Report.Name != "" {
			ref.Name = refused.Report.Name
		}
		skipped = append(skipped, index.Skipped{Bundle: ref, Reason: err, Message: err.Error()})
	}
	return loaded, skipped, nil
}

// groupCauses says a cause several images share (the registry did not
// answer, or wants credentials) once, with the images, and the other
// errors as they are.
func groupCauses(args []string, errs []error) []error {
	groups, rest := image.GroupCauses(errs)
	out := make([]error, 0, len(groups)+len(rest))
	for _, g := range groups {
		names := make([]string, len(g.Items))
		for k, i := range g.Items {
			names[k] = args[i]
		}
		out = append(out, fmt.Errorf("load bundles: %w", &image.GroupedError{Group: g, Images: names, First: errs[g.Items[0]]}))
	}
	for _, i := range rest {
		out = append(out, errs[i])
	}
	return out
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// loadAdvice says what to do about bundles that failed to load: images
// that could not be opened need their reference or access checked; bundles
// that were read but are broken are explained by opm bundle validate.
func loadAdvice(args []string, errs []error, unreachable []bool) string {
	var broken []string
	images := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case unreachable[i]:
			images++
		default:
			broken = append(broken, args[i])
		}
	}
	advice := "nothing was added"
	if images > 0 {
		advice += "; check that each image reference exists and can be pulled (credentials: --authfile; a private CA: --ca-file)"
	}
	if len(broken) > 0 {
		advice += fmt.Sprintf("; `opm bundle validate %s` shows every problem with its fix", strings.Join(broken, " "))
	}
	return advice
}

// PullWithTool pulls the bundle images among args with docker or podman
// and saves each to an archive in a temporary directory, so that bundles
// come from the tool's storage and configuration. It returns, per argument,
// the archive to read (Bundles.From). insecure lets podman pull from a
// plain-HTTP or self-signed registry; the tool's output goes to out.
// cleanup removes the archives.
//
// The pulls are held to the signature policy of the client newClient
// makes, as opm's own pulls are: podman is given the policy file, and
// docker, which checks no signatures, is refused when the policy requires
// any.
func PullWithTool(ctx context.Context, tool containertools.Tool, args []string, insecure bool, newClient func() (*image.Client, error), out io.Writer) (map[string]string, func(), error) {
	if tool == "" {
		return nil, func() {}, nil
	}
	c, err := newClient()
	if err != nil {
		return nil, func() {}, err
	}
	policy, checks, err := c.SignaturePolicy()
	if err != nil {
		return nil, func() {}, err
	}
	if tool == containertools.Docker && checks {
		return nil, func() {}, fmt.Errorf("--pull-tool docker: the signature policy %s requires signatures, which docker does not check: pull with podman (given the policy) or with opm itself (no --pull-tool)", policy)
	}
	r, err := containertools.Find(tool)
	if err != nil {
		return nil, func() {}, fmt.Errorf("--pull-tool: %w", err)
	}
	r.Stdout, r.Stderr = out, out
	dir, err := os.MkdirTemp("", "opm-pull-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	from := map[string]string{}
	for i, arg := range args {
		if isDir(arg) {
			continue
		}
		ref, err := image.ParseReference(arg)
		if err != nil || ref.Transport != image.TransportRegistry {
			continue // archives and layouts are read directly
		}
		pull := []string{"pull"}
		if tool == containertools.Podman && insecure {
			pull = append(pull, "--tls-verify=false")
		}
		if tool == containertools.Podman && policy != "" {
			pull = append(pull, "--signature-policy", policy)
		}
		pull = append(pull, ref.Name)
		if err := r.Run(ctx, "", pull...); err != nil {
			return nil, cleanup, err
		}
		file := filepath.Join(dir, fmt.Sprintf("bundle-%d.tar", i))
		if tool == containertools.Podman {
			err = r.Run(ctx, "", "save", "--format", "oci-archive", "-o", file, ref.Name)
			from[arg] = "oci-archive:" + file
		} else {
			err = r.Run(ctx, "", "save", "-o", file, ref.Name)
			from[arg] = "docker-archive:" + file
		}
		if err != nil {
			return nil, cleanup, err
		}
	}
	return from, cleanup, nil
}
