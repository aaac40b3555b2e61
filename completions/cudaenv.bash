# cudaenv tab completion for bash. Load it from ~/.bashrc with
#   eval "$(cudaenv completion bash)"
# or save it as ~/.local/share/bash-completion/completions/cudaenv
_cudaenv_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]-} line i
  local -a words
  for ((i = 1; i <= COMP_CWORD; i++)); do
    words+=(":${COMP_WORDS[i]-}")
  done
  COMPREPLY=()
  local out
  out=$(cudaenv __complete "${words[@]}" 2>/dev/null) || return 0
  case $out in
    :dirs | :files | :commands)
      local what=-f
      [[ $out == :dirs ]] && what=-d
      [[ $out == :commands ]] && what=-c
      [[ $what == -c ]] || compopt -o filenames 2>/dev/null
      while IFS= read -r line; do
        COMPREPLY+=("$line")
      done < <(compgen "$what" -- "$cur")
      return 0
      ;;
  esac
  while IFS= read -r line; do
    [[ -n $line ]] && COMPREPLY+=("${line%%$'\t'*}")
  done <<<"$out"
  return 0
}
complete -F _cudaenv_complete cudaenv
