# placeholder: owned by the part that builds it
