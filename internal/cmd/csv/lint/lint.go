// Package lint is `opm csv lint`.
package lint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/lintflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/validate"
)

// Options are the flags and arguments of opm csv lint.
type Options struct {
	lintflags.Flags
	Files []string
}

// NewCmd is `opm csv lint`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Check ClusterServiceVersion files",
		Long: `Check ClusterServiceVersion files, as a pre-commit hook passes them.

A file in a bundle's manifests/ directory is checked with the rest of its
bundle, so that owned CRDs missing from the bundle are found; only findings
against the CSV file itself are reported. Any other file is checked alone and
the rules that need a whole bundle are skipped (opm says so once).

Exit status: 0 when no finding fails the run (see --fail-on), 1 when some do,
2 for a usage or I/O error (bad flag, unknown rule, unreadable file).`,
		Example: `  opm csv lint bundle/manifests/my-operator.clusterserviceversion.yaml
  opm csv lint -o json config/manifests/bases/*.clusterserviceversion.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	opts.Add(cmd, output.Text, output.JSON, output.SARIF)
	return cmd
}

// Run lints the files and renders the report.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	vopts, err := opts.Options(f)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range opts.Files {
		st, err := os.Stat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("%s: no such file", name))
		case err != nil:
			errs = append(errs, err)
		case st.IsDir():
			errs = append(errs, fmt.Errorf("%s: is a directory (opm bundle validate checks a bundle directory)", name))
		}
	}
	if len(errs) > 0 {
		return exit.With(exit.Usage, errors.Join(errs...))
	}

	results := make([]csvLintResult, len(opts.Files))
	ioErrs := make([]error, len(opts.Files))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, name := range opts.Files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				return
			}
			results[i], ioErrs[i] = lintCSV(name, vopts)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return exit.Interrupt()
	}
	if err := errors.Join(ioErrs...); err != nil {
		return exit.With(exit.Usage, err)
	}

	reports := make([]validate.BundleReport, len(results))
	var alone []string
	for i, r := range results {
		reports[i] = r.report
		if r.standalone {
			alone = append(alone, opts.Files[i])
		}
	}
	if opts.Output == output.Text {
		t := f.IO.ErrTheme()
		if len(alone) > 0 {
			what := alone[0] + " is"
			if len(alone) > 1 {
				what = fmt.Sprintf("%d files (%s) are", len(alone), strings.Join(alone, ", "))
			}
			fmt.Fprintf(f.IO.ErrOut, "%s %s not inside a bundle's manifests/ directory: bundle-level rules (owned CRDs present, annotations, ...) were skipped\n", t.NotePrefix(), what)
		}
		for i, r := range results {
			if len(r.unparsed) > 0 {
				fmt.Fprintf(f.IO.ErrOut, "%s %s was checked with its bundle, where %s did not parse; `opm bundle validate %s` shows why\n",
					t.NotePrefix(), opts.Files[i], strings.Join(r.unparsed, ", "), r.bundleDir)
			}
		}
	}
	return opts.Render(f, validate.NewResult(reports, vopts.FailOn), vopts.FailOn, "file")
}

// lintCSV checks one CSV file. When it is the CSV of the bundle whose
// manifests/ holds it, the whole bundle is loaded and checked, and the
// findings against the CSV file are kept (so an owned CRD missing from the
// bundle is found); otherwise the file is checked alone (standalone) and
// the bundle-scope rules do not run. Findings name the file as given.
func lintCSV(name string, opts validate.Options) (res csvLintResult, err error) {
	b, csvFile, loadErr, err := enclosingBundle(name)
	if err != nil {
		return res, err
	}
	if b != nil {
		res.bundleDir = filepath.Dir(filepath.Dir(name))
		rep := validate.Check(name, b, loadErr, opts)
		kept := []validate.Finding{}
		for _, f := range rep.Findings {
			switch {
			case f.File == csvFile:
				f.File = name
				kept = append(kept, f)
			case f.Rule == "yaml-syntax":
				// Another file of the bundle does not parse: the CSV's
				// findings may stem from it (an owned CRD "missing").
				res.unparsed = append(res.unparsed, f.File)
			}
		}
		rep.Findings = kept
		res.report = rep
		return res, nil
	}
	res.standalone = true
	data, err := os.ReadFile(name)
	if err != nil {
		return res, err
	}
	b, loadErr = bundle.ParseCSVFile(name, data)
	res.report = validate.Check(name, b, loadErr, opts)
	return res, nil
}

// csvLintResult is what linting one CSV file found.
type csvLintResult struct {
	report validate.BundleReport
	// standalone is set when the file was checked alone, not in its bundle.
	standalone bool
	// bundleDir is the bundle the file was checked in, and unparsed its
	// other files that have syntax errors.
	bundleDir string
	unparsed  []string
}

// enclosingBundle returns the bundle whose CSV is the file name, when name
// sits in that bundle's manifests/ directory, with the CSV's file name
// inside the bundle and the error loading the bundle returned. When name
// sits in a bundle's manifests/ but holds something else, err says so and
// what to run instead.
func enclosingBundle(name string) (b *bundle.Bundle, csvFile string, loadErr, err error) {
	abs, aerr := filepath.Abs(name)
	if aerr != nil {
		return nil, "", nil, nil
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) != bundle.ManifestsDir {
		return nil, "", nil, nil
	}
	b, loadErr = bundle.LoadDir(filepath.Dir(dir))
	csvFile = path.Join(bundle.ManifestsDir, filepath.Base(abs))
	if b == nil || b.Root != "." {
		return nil, "", nil, nil
	}
	if b.CSV == nil || b.CSV.Object == nil || b.CSV.Object.File != csvFile {
		if kinds := otherKinds(b, csvFile); len(kinds) > 0 {
			return nil, "", nil, fmt.Errorf("%s is not the bundle's CSV (it holds a %s); csv lint checks ClusterServiceVersion files: use opm bundle validate %s",
				name, strings.Join(kinds, ", "), filepath.Dir(filepath.Dir(name)))
		}
		return nil, "", nil, nil
	}
	return b, csvFile, loadErr, nil
}

// otherKinds are the kinds of the objects in file, when none of them is a
// ClusterServiceVersion.
func otherKinds(b *bundle.Bundle, file string) []string {
	var kinds []string
	seen := map[string]bool{}
	for _, o := range b.Objects {
		if o.File != file {
			continue
		}
		if o.Kind == "ClusterServiceVersion" {
			return nil
		}
		if k := o.Kind; k != "" && !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	return kinds
}
