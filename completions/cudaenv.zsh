#compdef cudaenv
# cudaenv tab completion for zsh. Load it from ~/.zshrc, after compinit, with
#   eval "$(cudaenv completion zsh)"
# or save it as _cudaenv in a folder on $fpath.
_cudaenv() {
  local -a args lines vals descs
  local line
  args=(${words[2,CURRENT]/#/:})
  lines=("${(@f)$(cudaenv __complete "${args[@]}" 2>/dev/null)}")
  case ${lines[1]-} in
    :dirs) _files -/; return ;;
    :files) _files; return ;;
    :commands) _command_names -e; return ;;
  esac
  for line in "${lines[@]}"; do
    [[ -n $line ]] || continue
    vals+=("${line%%$'\t'*}")
    if [[ $line == *$'\t'* ]]; then
      descs+=("${line%%$'\t'*}  -- ${line#*$'\t'}")
    else
      descs+=("$line")
    fi
  done
  (( ${#vals} )) && compadd -l -d descs -- "${vals[@]}"
}
if [[ ${funcstack[1]-} == _cudaenv ]]; then
  _cudaenv "$@"
elif (( ${+functions[compdef]} )); then
  compdef _cudaenv cudaenv
fi
