// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* demangle: C++ and Rust (legacy and v0) names against their expected readable forms.
 * The Rust symbols are what rustc 1.95 wrote for a small crate `mycrate` (tests/data/
 * mycrate.rs, built with `rustc --crate-type=dylib -C opt-level=1`, and with
 * `-C symbol-mangling-version=v0`; nm --demangle agrees); the expected forms follow the Rust mangling spec:
 * legacy names are Itanium-shaped paths whose last element is the hash 17h<16 hex> (dropped),
 * with $LT$ $GT$ $C$ $u20$ .. escapes; v0 names start with _R: C is a crate root (its s..._
 * disambiguator not shown), N<ns> a nested path, M an inherent impl <Type>, X a trait impl
 * <Type as Trait>, I..E generic arguments (::<..> after a value path), A an array, R a
 * reference, e str, h u8, j u32, c char, d f64, B<n>_ a back-reference. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "symbols/demangle.h"

static const struct {
	const char *mangled, *want;	/* want NULL: left as it is */
} cases[] = {
	/* C++ (Itanium): namespaces, templates, operators; no parameter lists, as perf shows them */
	{ "_ZN2v88internal6String11WriteToFlatIhEEvS1_", "v8::internal::String::WriteToFlat<unsigned char>" },
	{ "_ZN3geo3AccImEpLEm", "geo::Acc<unsigned long>::operator+=" },
	{ "_ZN3geo4spinImEET_S1_m", "geo::spin<unsigned long>" },
	{ "_ZplRK1AS1_", "operator+" },
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back" },
	{ "_ZN3foo3barC2Ev", "foo::bar::bar" },
	{ "_ZN3foo3barD0Ev", "foo::bar::~bar" },
	{ "_ZZ4mainE5count", "main::count" },
	/* Rust legacy: the hash goes, the escapes are read */
	{ "_ZN7mycrate7use_all17h4c94fed60f6bfbacE", "mycrate::use_all" },
	{ "_ZN7mycrate6shapes6Circle3new17hecb200c0342b7256E", "mycrate::shapes::Circle::new" },
	{ "_ZN65_$LT$mycrate..shapes..Circle$u20$as$u20$mycrate..shapes..Area$GT$4area17h43e8b74b59c72674E",
	  "<mycrate::shapes::Circle as mycrate::shapes::Area>::area" },
	{ "_ZN7mycrate6shapes17Pair$LT$A$C$B$GT$5first17ha294dea024140593E",
	  "mycrate::shapes::Pair<A,B>::first" },
	/* Rust v0 */
	{ "_RNvCsjrVPa4l567z_7mycrate7use_all", "mycrate::use_all" },
	{ "_RNvMs_NtCsjrVPa4l567z_7mycrate6shapesNtB4_6Circle3new", "<mycrate::shapes::Circle>::new" },
	{ "_RNvXNtCsjrVPa4l567z_7mycrate6shapesNtB2_6CircleNtB2_4Area4area",
	  "<mycrate::shapes::Circle as mycrate::shapes::Area>::area" },
	{ "_RINvNtCsjrVPa4l567z_7mycrate6shapes5totalNtB2_6CircleEB4_",
	  "mycrate::shapes::total::<mycrate::shapes::Circle>" },
	{ "_RNvMs0_NtCsjrVPa4l567z_7mycrate6shapesINtB5_4PairAhj3_cE5firstB7_",
	  "<mycrate::shapes::Pair<[u8; 3], char>>::first" },
	{ "_RNvMs0_NtCsjrVPa4l567z_7mycrate6shapesINtB5_4PairmReE5firstB7_",
	  "<mycrate::shapes::Pair<u32, &str>>::first" },
	{ "_RNvXs1_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecNtNtCsjrVPa4l567z_7mycrate6shapes6CircleENtNtNtCsgEmfK2I1SDS_4core3ops4drop4Drop4dropBQ_",
	  "<alloc::raw_vec::RawVec<mycrate::shapes::Circle> as core::ops::drop::Drop>::drop" },
	/* not mangled, or not valid: left alone */
	{ "main", NULL },
	{ "work_70", NULL },
	{ "_Z", NULL },
	{ "_ZN3foo", NULL },
	{ "_RNv", NULL },
	{ "_Rb_tree_increment", NULL },
};

Test(demangle, table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = demangle__name(cases[i].mangled);

		if (cases[i].want)
			cr_expect(got && !strcmp(got, cases[i].want), "%s: got '%s', want '%s'",
				  cases[i].mangled, got ? got : "(none)", cases[i].want);
		else
			cr_expect_null(got, "%s: got '%s', want none", cases[i].mangled, got);
		free(got);
	}
}

Test(demangle, only_mangled_names_are_tried)
{
	cr_expect(demangle__is_mangled("_ZN1a1bEv"));
	cr_expect(demangle__is_mangled("_RNvC1a1b"));
	cr_expect_not(demangle__is_mangled("main"));
	cr_expect_not(demangle__is_mangled("_start"));
	cr_expect_not(demangle__is_mangled(""));
	cr_expect_null(demangle__name(NULL));
}
