package main

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
	"github.com/opmkit/opm/internal/validate"
)

func newCSVCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "csv",
		Short: "Work with ClusterServiceVersion files",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCSVLintCmd(a))
	return cmd
}

type csvLintOptions struct {
	lintFlags
	Files []string
}

func newCSVLintCmd(a *app) *cobra.Command {
	opts := &csvLintOptions{}
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
			return runCSVLint(cmd.Context(), a, opts)
		},
	}
	opts.lintFlags.add(cmd)
	return cmd
}

func runCSVLint(ctx context.Context, a *app, opts *csvLintOptions) error {
	vopts, err := opts.options(a)
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
		return &ExitError{Code: exitUsage, Err: errors.Join(errs...)}
	}

	reports := make([]validate.BundleReport, len(opts.Files))
	standalone := make([]bool, len(opts.Files))
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
			reports[i], standalone[i], ioErrs[i] = lintCSV(name, vopts)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted")}
	}
	if err := errors.Join(ioErrs...); err != nil {
		return &ExitError{Code: exitUsage, Err: err}
	}

	if opts.Output != outputJSON {
		var alone []string
		for i, s := range standalone {
			if s {
				alone = append(alone, opts.Files[i])
			}
		}
		if len(alone) > 0 {
			t := newTheme(a.streams.ErrOut, a.streams.ErrTTY)
			what := alone[0] + " is"
			if len(alone) > 1 {
				what = fmt.Sprintf("%d files (%s) are", len(alone), strings.Join(alone, ", "))
			}
			fmt.Fprintf(a.streams.ErrOut, "%s %s not inside a bundle's manifests/ directory: bundle-level rules (owned CRDs present, annotations, ...) were skipped\n", t.notePrefix(), what)
		}
	}
	return a.render(validate.NewResult(reports, vopts.FailOn), &opts.lintFlags, vopts.FailOn, "file")
}

// lintCSV checks one CSV file. When it is the CSV of the bundle whose
// manifests/ holds it, the whole bundle is loaded and checked, and the
// findings against the CSV file are kept (so an owned CRD missing from the
// bundle is found); otherwise the file is checked alone (standalone) and
// the bundle-scope rules do not run. Findings name the file as given.
func lintCSV(name string, opts validate.Options) (rep validate.BundleReport, standalone bool, err error) {
	if b, csvFile, loadErr := enclosingBundle(name); b != nil {
		rep = validate.Check(name, b, loadErr, opts)
		kept := []validate.Finding{}
		for _, f := range rep.Findings {
			if f.File == csvFile {
				f.File = name
				kept = append(kept, f)
			}
		}
		rep.Findings = kept
		return rep, false, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return rep, true, err
	}
	b, loadErr := bundle.ParseCSVFile(name, data)
	return validate.Check(name, b, loadErr, opts), true, nil
}

// enclosingBundle returns the bundle whose CSV is the file name, when name
// sits in that bundle's manifests/ directory, with the CSV's file name
// inside the bundle and the error loading the bundle returned.
func enclosingBundle(name string) (*bundle.Bundle, string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, "", nil
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) != bundle.ManifestsDir {
		return nil, "", nil
	}
	b, loadErr := bundle.LoadDir(filepath.Dir(dir))
	csvFile := path.Join(bundle.ManifestsDir, filepath.Base(abs))
	if b == nil || b.Root != "." || b.CSV == nil || b.CSV.Object == nil || b.CSV.Object.File != csvFile {
		return nil, "", nil
	}
	return b, csvFile, loadErr
}
