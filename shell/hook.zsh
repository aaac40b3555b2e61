# cudaenv shell integration for zsh: eval "$(cudaenv init zsh)" in ~/.zshrc
cudaenv() {
  case "${1-}" in
    use)
      shift
      local __cudaenv_out
      __cudaenv_out="$(@CUDAENV@ shell-use zsh "$@")" || return $?
      eval "$__cudaenv_out"
      ;;
    current|which|prefix|env|list|ls)
      # answered by the hook's quicker binary, with cudaenv's own code
      @HOOK@ "$@"
      ;;
    *)
      @CUDAENV@ "$@"
      ;;
  esac
}
__cudaenv_check() { return 1 }
__cudaenv_hook() {
  local __cudaenv_rc=$?
  if ! __cudaenv_check; then
    eval "$(@HOOK@ hook-env zsh)"
  fi
  return $__cudaenv_rc
}
typeset -ag precmd_functions chpwd_functions
if (( ! ${precmd_functions[(Ie)__cudaenv_hook]} )); then
  precmd_functions=(__cudaenv_hook $precmd_functions)
fi
if (( ! ${chpwd_functions[(Ie)__cudaenv_hook]} )); then
  chpwd_functions=(__cudaenv_hook $chpwd_functions)
fi
