dnl ceems_flags.m4 - add a compiler or linker flag only when the compiler
dnl accepts it, so the same configure.ac works with gcc and clang.
AC_DEFUN([CEEMS_ADD_CFLAG], [
	AS_VAR_PUSHDEF([cache], [ceems_cv_cflag_$1])
	AC_CACHE_CHECK([whether $CC accepts $1], [cache], [
		save_CFLAGS="$CFLAGS"
		CFLAGS="$CFLAGS -Werror $1"
		AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
			[AS_VAR_SET([cache], [yes])], [AS_VAR_SET([cache], [no])])
		CFLAGS="$save_CFLAGS"])
	AS_VAR_IF([cache], [yes], [CEEMS_CFLAGS="$CEEMS_CFLAGS $1"])
	AS_VAR_POPDEF([cache])
])
AC_DEFUN([CEEMS_ADD_LDFLAG], [
	AS_VAR_PUSHDEF([cache], [ceems_cv_ldflag_$1])
	AC_CACHE_CHECK([whether the linker accepts $1], [cache], [
		save_LDFLAGS="$LDFLAGS"
		LDFLAGS="$LDFLAGS -Werror $1"
		AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
			[AS_VAR_SET([cache], [yes])], [AS_VAR_SET([cache], [no])])
		LDFLAGS="$save_LDFLAGS"])
	AS_VAR_IF([cache], [yes], [CEEMS_LDFLAGS="$CEEMS_LDFLAGS $1"])
	AS_VAR_POPDEF([cache])
])
