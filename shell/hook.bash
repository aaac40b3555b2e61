# cudaenv shell integration for bash: eval "$(cudaenv init bash)" in ~/.bashrc
cudaenv() {
  case "${1-}" in
    use)
      shift
      local __cudaenv_out
      __cudaenv_out="$(@CUDAENV@ shell-use bash "$@")" || return $?
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
__cudaenv_check() { return 1; }
__cudaenv_hook() {
  local __cudaenv_rc=$?
  if ! __cudaenv_check; then
    eval "$(@HOOK@ hook-env bash)"
  fi
  return $__cudaenv_rc
}
case ";${PROMPT_COMMAND[*]-};" in
  *__cudaenv_hook*) ;;
  *)
    if [[ -n ${PROMPT_COMMAND+x} && ${PROMPT_COMMAND@a} == *a* ]]; then
      PROMPT_COMMAND=(__cudaenv_hook "${PROMPT_COMMAND[@]}")
    else
      PROMPT_COMMAND="__cudaenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
    fi
    ;;
esac
