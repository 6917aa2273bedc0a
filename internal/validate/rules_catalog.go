package validate

// File-based catalog rules. Their checks live in internal/fbc, which imports
// this package for findings; they are registered here so that the rule
// catalog (docs/validation.md) and --list-rules show them.
var (
	RuleCatalogSyntax = register(&Rule{ID: "catalog-syntax", Severity: Error, Scope: ScopeCatalog, RootCause: true,
		What: "Every catalog file parses (JSON objects back to back, or YAML documents) and every object is a blob with a schema of the right shape.",
		Why:  "opm and OLM refuse the whole catalog when one file does not parse.",
		Fix:  "Fix the syntax at the reported line, or list the file in .indexignore if it is not part of the catalog."})
	RuleCatalogEmpty = register(&Rule{ID: "catalog-empty", Severity: Error, Scope: ScopeCatalog,
		What: "The catalog holds at least one blob: the directory (or image) checked is a file-based catalog, not an empty directory, a directory of other files, or empty files.",
		Why:  "An empty catalog serves nothing; it is usually the wrong directory, or an empty file left by a failed render (opm render-template ... > catalog.yaml) that would otherwise pass as a catalog.",
		Fix:  "Give the catalog's root directory (the one holding the package directories or catalog.json), or regenerate the empty file."})
	RuleCatalogPackageUnique = register(&Rule{ID: "catalog-package-unique", Severity: Error, Scope: ScopeCatalog,
		What: "Each package has exactly one olm.package blob, with a name.",
		Why:  "The package blob carries the default channel; two of them leave OLM to guess.",
		Fix:  "Keep one olm.package blob per package and delete the others."})
	RuleCatalogPackageMissing = register(&Rule{ID: "catalog-package-missing", Severity: Error, Scope: ScopeCatalog,
		What: "Every channel and bundle names a package that has an olm.package blob.",
		Why:  "Channels and bundles of an undeclared package are refused when the catalog is served.",
		Fix:  "Add the olm.package blob (name, defaultChannel), or correct the package field."})
	RuleCatalogDefaultChannel = register(&Rule{ID: "catalog-default-channel", Severity: Error, Scope: ScopeCatalog,
		What: "Each package's defaultChannel is set and names one of its channels.",
		Why:  "OLM installs from the default channel when a subscription names none; a missing one makes the package uninstallable that way.",
		Fix:  "Set defaultChannel to one of the package's olm.channel names."})
	RuleCatalogChannelUnique = register(&Rule{ID: "catalog-channel-unique", Severity: Error, Scope: ScopeCatalog,
		What: "Channel names are unique in a package, and a bundle is listed once per channel.",
		Why:  "Duplicates make the upgrade graph ambiguous.",
		Fix:  "Merge the duplicate channels or entries into one."})
	RuleCatalogChannelBundle = register(&Rule{ID: "catalog-channel-bundle", Severity: Error, Scope: ScopeCatalog,
		What: "Every channel entry names an olm.bundle of the same package.",
		Why:  "OLM cannot install a channel entry without its bundle.",
		Fix:  "Add the olm.bundle blob, or remove the entry from the channel."})
	RuleCatalogChannelEdge = register(&Rule{ID: "catalog-channel-edge", Severity: Info, Scope: ScopeCatalog,
		What: "Where a channel's replaces and skips name bundles outside the channel (one note per channel, at its tail); skips hold no empty name (an error).",
		Why:  "An edge to a bundle that is not in the channel is how clusters still running a pruned or filtered-out version upgrade into it: keep it. Only a misspelt name is a mistake.",
		Fix:  "Nothing, unless a name listed is misspelt: then correct it."})
	RuleCatalogChannelHead = register(&Rule{ID: "catalog-channel-head", Severity: Error, Scope: ScopeCatalog,
		What: "Each channel has exactly one head: one entry that no other entry replaces or skips.",
		Why:  "OLM upgrades to the head; with two heads one of them is never reached, with none the graph loops.",
		Fix:  "Make the newest bundle replace or skip the other candidates."})
	RuleCatalogChannelCycle = register(&Rule{ID: "catalog-channel-cycle", Severity: Error, Scope: ScopeCatalog,
		What: "The replaces and skips edges of a channel form no cycle.",
		Why:  "A cycle makes upgrades loop forever and is refused by OLM.",
		Fix:  "Each bundle may replace or skip only older bundles; correct one edge of the cycle."})
	RuleCatalogBundleUnique = register(&Rule{ID: "catalog-bundle-unique", Severity: Error, Scope: ScopeCatalog,
		What: "Bundle names are unique in a package.",
		Why:  "Channel entries name bundles; two bundles of one name make them ambiguous.",
		Fix:  "Rename or delete one of the bundles."})
	RuleCatalogBundlePackages = register(&Rule{ID: "catalog-bundle-packages", Severity: Error, Scope: ScopeCatalog,
		What: "A bundle (its name, version and image) belongs to one package.",
		Why:  "An index database keys bundles by name, version and image: migrate --to sqlite refuses the second one.",
		Fix:  "Rename the bundle in one of the packages, or remove it from one."})
	RuleCatalogBundleChannel = register(&Rule{ID: "catalog-bundle-channel", Severity: Error, Scope: ScopeCatalog,
		What: "Every bundle is in at least one channel.",
		Why:  "A bundle outside every channel can never be installed and is refused when the catalog is served.",
		Fix:  "Add an entry for the bundle to a channel, or delete the bundle."})
	RuleCatalogProperty = register(&Rule{ID: "catalog-property", Severity: Error, Scope: ScopeCatalog,
		What: "Properties have values of the right shape: one olm.package per bundle naming its package with a semver version, olm.gvk(.required) with version and kind, olm.package.required with a valid version range, olm.bundle.object holding base64 of a manifest, skipRange a valid range.",
		Why:  "OLM parses these values to resolve and install bundles; a malformed one fails the whole catalog.",
		Fix:  "Correct the value as the message says."})
)

// Publishing rules of a catalog: run by `opm validate` when their flag
// gives them something to check against.
var (
	RuleCatalogCSVMetadata = register(&Rule{ID: "catalog-openshift-csv-metadata", Severity: Error, Scope: ScopeCatalog, Set: SetOpenShift,
		What: "A catalog for OpenShift 4.17 or later (--ocp-version) carries no olm.bundle.object property: bundles describe their CSV with olm.csv.metadata instead. Runs whenever --ocp-version is given, and checks nothing without it.",
		Why:  "From OpenShift 4.17 the catalogs Red Hat and the community pipelines build must not embed whole manifests (olm.bundle.object makes catalogs large and slow to serve); OLM reads what it needs from olm.csv.metadata, and those pipelines refuse a catalog that still has olm.bundle.object.",
		Fix:  "Render the catalog with opm render --migrate-level bundle-object-to-csv-metadata (or opm alpha render-template ... --migrate-level bundle-object-to-csv-metadata)."})
	RuleCatalogRegistryAllowed = register(&Rule{ID: "catalog-image-registry-allowed", Severity: Warning, Scope: ScopeCatalog, Set: SetSupplyChain,
		What: "Every olm.bundle's image and relatedImages name a registry listed in --allowed-registries (a host[:port], or a host/path prefix); runs whenever --allowed-registries is given, and checks nothing without it.",
		Why:  "A catalog makes clusters pull its bundle images and, through them, the related images; one from a registry the release process does not mirror, scan and sign fails to pull in disconnected clusters or bypasses those checks.",
		Fix:  "Point the image at its copy on an allowed registry, or add the registry to --allowed-registries."})
)
